"""`hammer load` against real services on loopback (issue 4): TLS with a test CA, redirects,
cookies, vegeta / JSON-lines / HAR request files, thresholds, and the operator's flags.

What the server received is checked on the server side: nginx writes one JSON object per
request (method, URI, chosen headers, body, TLS details, arrival time) to an access log in the
test's tmp dir, and `hammer serve` counts requests by method. Every server binds 127.0.0.1 and is
stopped by the fixture that started it; every hammer run is bounded by a request list.
"""
import base64
import collections
import json
import re
import shutil
import tempfile
import time
from pathlib import Path

import pytest

import chromium_har
from harness import HammerServe, Nginx, free_port, run_hammer
from tls_pki import make_pki

# One JSON object per request; escape=json keeps bodies with quotes, newlines and UTF-8 exact.
LOG_FORMAT = (
    "log_format hammer_json escape=json '{"
    '"t":"$msec","m":"$request_method","u":"$request_uri","s":"$status",'
    '"x":"$http_x_test","g":"$http_x_global","ck":"$http_cookie","auth":"$http_authorization",'
    '"ct":"$content_type","cl":"$http_content_length","ua":"$http_user_agent",'
    '"b":"$request_body","sni":"$ssl_server_name","proto":"$ssl_protocol",'
    '"reused":"$ssl_session_reused","conn":"$connection","n":"$connection_requests"'
    "}';"
)


class AccessLog:
    def __init__(self, path):
        self.path = Path(path)
        self.path.touch()

    def entries(self, at_least=0, timeout=5.0):
        """The entries so far; waits (bounded) for at least `at_least` of them, because nginx
        logs a request just after sending its response, possibly after hammer has exited."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.path.read_text(encoding="utf-8", errors="surrogateescape")
            lines = [line for line in text.split("\n") if line]
            if len(lines) >= at_least or time.monotonic() > deadline:
                return [json.loads(line) for line in lines]
            time.sleep(0.02)

    def clear(self):
        self.path.write_text("")  # nginx appends (O_APPEND), so truncation is safe


@pytest.fixture
def start_nginx():
    """Starts nginx instances (Nginx(**kwargs)) and stops all of them after the test."""
    started = []

    def start(**kwargs):
        server = Nginx(**kwargs)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


def summary_of(path):
    return json.loads(Path(path).read_text())


def lines(*urls):
    return "".join(u + "\n" for u in urls)


# ---------------------------------------------------------------------------------------------
# TLS against nginx with a certificate from a CA made by the test.


class TlsNginx:
    """nginx with the test CA's localhost/127.0.0.1 certificate on `port` and a certificate for
    other.test only on `other_port`; plain HTTP stays on the harness port."""

    def __init__(self, start_nginx, pki, tmp_path, extra=""):
        self.port, self.other_port = free_port(), free_port()
        self.log = AccessLog(tmp_path / "tls-access.log")
        self.nginx = start_nginx(
            http_extra=LOG_FORMAT + f"""
  server {{
    listen 127.0.0.1:{self.other_port} ssl;
    ssl_certificate {pki.other_cert};
    ssl_certificate_key {pki.other_key};
    access_log {self.log.path} hammer_json;
    location / {{ return 200 "other\\n"; }}
  }}""",
            server_extra=f"""
    listen 127.0.0.1:{self.port} ssl;
    ssl_certificate {pki.server_cert};
    ssl_certificate_key {pki.server_key};
    keepalive_requests 5;
    access_log {self.log.path} hammer_json;
    {extra}""")

    def url(self, host="127.0.0.1", path="/"):
        return f"https://{host}:{self.port}{path}"

    def other_url(self, host="127.0.0.1", path="/"):
        return f"https://{host}:{self.other_port}{path}"


def test_tls_verified_with_the_test_ca_by_ip_and_by_name(start_nginx, pki, tmp_path):
    server = TlsNginx(start_nginx, pki, tmp_path)
    summary = tmp_path / "s.json"
    text = lines(*[server.url("127.0.0.1")] * 3, *[server.url("localhost")] * 3)
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--cacert", str(pki.ca),
                    "--summary-json", str(summary)], input_text=text)
    assert r.returncode == 0, r.stderr
    s = summary_of(summary)
    assert (s["succeeded"], s["failed"]) == (6, 0), r.stderr
    # One connection per origin, each with one full handshake; 3 requests each on keep-alive.
    assert s["tls_handshakes"] == s["connections_opened"] == 2, s
    log = server.log.entries(at_least=6)
    assert len(log) == 6
    assert {e["proto"] for e in log} <= {"TLSv1.2", "TLSv1.3"}
    # SNI is sent for a name and, as RFC 6066 says, not for an IP literal.
    assert [e["sni"] for e in log] == [""] * 3 + ["localhost"] * 3
    assert len({e["conn"] for e in log}) == 2
    assert "tls          2 handshakes" in r.stderr


@pytest.mark.parametrize("session_config", [
    pytest.param("", id="nginx-defaults-tickets"),
    pytest.param("ssl_session_cache shared:hammer:1m; ssl_session_tickets off;",
                 id="session-id-cache"),
    pytest.param("ssl_protocols TLSv1.3;", id="tls13-tickets"),
])
def test_tls_sessions_resume_after_the_server_closes(start_nginx, pki, tmp_path,
                                                     session_config):
    # keepalive_requests 5: nginx closes after 5 requests, so 12 requests need 3 connections.
    server = TlsNginx(start_nginx, pki, tmp_path, extra=session_config)
    summary = tmp_path / "s.json"
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--cacert", str(pki.ca),
                    "--summary-json", str(summary)],
                   input_text=lines(*[server.url("localhost")] * 12))
    assert r.returncode == 0, r.stderr
    s = summary_of(summary)
    assert (s["succeeded"], s["tls_handshakes"], s["connections_opened"]) == (12, 3, 3), s
    log = server.log.entries(at_least=12)
    # Server side: the first request of connections 2 and 3 arrived on a resumed session.
    assert [e["reused"] for e in log if e["n"] == "1"] == [".", "r", "r"], log
    assert s["tls_resumed"] == 2, s


@pytest.mark.parametrize("host,reason", [
    ("localhost", "certificate verification failed: hostname mismatch"),
    ("127.0.0.1", "certificate verification failed: IP address mismatch"),
])
def test_tls_certificate_for_another_name_is_a_tls_failure(start_nginx, pki, tmp_path, host,
                                                           reason):
    server = TlsNginx(start_nginx, pki, tmp_path)
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--cacert", str(pki.ca)],
                   input_text=lines(*[server.other_url(host)] * 3))
    assert r.returncode == 0, r.stderr
    assert r.failures() == [server.other_url(host) + "\t"] * 3
    assert r.error_counter("tls") == 3
    assert reason.lower() in r.stderr.lower(), r.stderr
    assert server.log.entries(timeout=0.2) == []  # no request got through

    # --insecure: no verification at all, so the same certificate is accepted.
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--insecure"],
                   input_text=lines(*[server.other_url(host)] * 3))
    assert r.returncode == 0, r.stderr
    assert len(r.successes()) == 3 and r.counters.get(("error", "tls"), 0) == 0, r.stderr
    assert len(server.log.entries(at_least=3)) == 3


def test_tls_unknown_ca_without_cacert_is_a_tls_failure(start_nginx, pki, tmp_path):
    server = TlsNginx(start_nginx, pki, tmp_path)
    urls = [server.url("127.0.0.1"), server.url("localhost")]
    r = run_hammer(["load", "-", "-c", "1", "-t", "1"], input_text=lines(*urls))
    assert r.returncode == 0, r.stderr
    assert r.error_counter("tls") == 2 and not r.successes()
    assert "certificate verification failed: unable to get local issuer certificate" in r.stderr
    # --insecure accepts the certificate the system store does not know.
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--insecure"], input_text=lines(*urls))
    assert len(r.successes()) == 2, r.stderr


def test_tls_cacert_that_cannot_be_loaded_is_a_usage_error(tmp_path):
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("not a certificate\n")
    for path in (tmp_path / "missing.pem", not_pem):
        r = run_hammer(["load", "-", "--cacert", str(path)], input_text="https://127.0.0.1:1/\n")
        assert r.returncode == 2, r.stderr
        assert f"--cacert: cannot load CA certificates from {path}" in r.stderr


# ---------------------------------------------------------------------------------------------
# Redirects, cookies, request files: nginx in front of `hammer serve`, with the JSON access log.


class LoggedNginx:
    """nginx on loopback with the JSON access log, /echo proxied to `hammer serve` (so nginx
    reads and logs request bodies), redirect chains and a cookie-protected location."""

    def __init__(self, start_nginx, serve, tmp_path, extra=""):
        self.log = AccessLog(tmp_path / "access.log")
        port = free_port()
        self.nginx = start_nginx(port=port, http_extra=LOG_FORMAT, server_extra=f"""
    access_log {self.log.path} hammer_json;
    client_body_buffer_size 1m;
    location = /echo {{ proxy_pass http://{serve.address}; }}
    location = /chain/a {{ absolute_redirect off; return 301 /chain/b; }}
    location = /chain/b {{ return 302 http://127.0.0.1:{port}/chain/c; }}
    location = /chain/c {{ return 200 "target\\n"; }}
    location = /loop/x {{ return 301 /loop/y; }}
    location = /loop/y {{ return 302 /loop/x; }}
    location = /login {{ add_header Set-Cookie "sid=abc; Path=/"; return 200 "welcome\\n"; }}
    location = /private {{
      if ($cookie_sid != "abc") {{ return 403 "forbidden\\n"; }}
      return 200 "private\\n";
    }}
    {extra}""")
        self.url = self.nginx.url


@pytest.fixture
def logged(start_nginx, serve, tmp_path):
    return LoggedNginx(start_nginx, serve, tmp_path)


def test_redirects_followed_with_a_count_per_request(serve, tmp_path):
    summary = tmp_path / "s.json"
    r = run_hammer(["load", "-", "-c", "2", "-t", "1", "--summary-json", str(summary)],
                   input_text=lines(*[serve.url("/redirect/3")] * 5))
    assert r.returncode == 0, r.stderr
    assert r.records and all(rec.startswith(serve.url("/redirect/3") + "\t0.")
                             for rec in r.records), r.records
    s = summary_of(summary)
    assert (s["succeeded"], s["redirects"]) == (5, 15), s
    assert serve.stats()["requests"] == 5 * 4  # /redirect/3, /2, /1, then the target
    assert "redirects    15 followed" in r.stderr


def test_redirect_loop_and_too_many_redirects(serve, tmp_path):
    r = run_hammer(["load", "-", "-c", "1", "-t", "1"],
                   input_text=lines(serve.url("/redirect-loop"), serve.url("/redirect-loop")))
    assert r.returncode == 0, r.stderr
    assert r.error_counter("redirect_loop") == 2 and not r.successes()
    assert "redirect cycle back to " + serve.url("/redirect-loop") in r.stderr
    # A chain longer than --max-redirects fails the same way.
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--max-redirects", "2"],
                   input_text=lines(serve.url("/redirect/3")))
    assert r.failures() == [serve.url("/redirect/3") + "\t"]
    assert r.error_counter("redirect_loop") == 1


def test_max_redirects_zero_takes_the_302_as_the_answer(serve, tmp_path):
    summary = tmp_path / "s.json"
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--max-redirects", "0",
                    "--summary-json", str(summary)],
                   input_text=lines(serve.url("/redirect/3"), serve.url("/redirect-loop")))
    assert r.returncode == 0, r.stderr
    assert len(r.successes()) == 2, r.stderr
    assert summary_of(summary)["redirects"] == 0
    assert serve.stats()["requests"] == 2  # nothing followed


def test_nginx_redirect_chains_relative_and_absolute(logged, tmp_path):
    summary = tmp_path / "s.json"
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--summary-json", str(summary)],
                   input_text=lines(logged.url("/chain/a"), logged.url("/chain/a"),
                                    logged.url("/loop/x")))
    assert r.returncode == 0, r.stderr
    assert len(r.records) == 3, r.records
    assert all(rec.startswith(logged.url("/chain/a") + "\t0.") for rec in r.records[:2])
    assert r.records[2] == logged.url("/loop/x") + "\t"
    s = summary_of(summary)
    # 2 per chain, and /loop/x -> /loop/y was followed before /loop/y -> /loop/x closed the cycle.
    assert (s["succeeded"], s["failures"], s["redirects"]) == (2, {"redirect_loop": 1}, 5), s
    log = logged.log.entries(at_least=8)
    assert [(e["u"], e["s"]) for e in log] == [
        ("/chain/a", "301"), ("/chain/b", "302"), ("/chain/c", "200")] * 2 + [
        ("/loop/x", "301"), ("/loop/y", "302")]


def test_cookies_from_hammer_serve_need_the_jar(serve):
    check, set_ = serve.url("/cookie/check"), serve.url("/cookie/set")
    # One slot: it sees the requests in order, and keeps what /cookie/set gave it.
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--cookies"],
                   input_text=lines(check, set_, check, check))
    assert r.returncode == 0, r.stderr
    assert [rec.endswith("\t") for rec in r.records] == [True, False, False, False], r.records
    assert r.error_counter("http_4xx") == 1
    # Without --cookies nothing is kept.
    r = run_hammer(["load", "-", "-c", "1", "-t", "1"], input_text=lines(set_, check))
    assert r.records[0].startswith(set_ + "\t0.") and r.records[1] == check + "\t"
    assert r.error_counter("http_4xx") == 1


def test_cookies_set_by_nginx_then_required(logged):
    login, private = logged.url("/login"), logged.url("/private")
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--cookies"],
                   input_text=lines(private, login, private))
    assert r.returncode == 0, r.stderr
    assert [rec.endswith("\t") for rec in r.records] == [True, False, False], r.records
    assert r.error_counter("http_4xx") == 1
    log = logged.log.entries(at_least=3)
    assert [(e["u"], e["s"], e["ck"]) for e in log] == [
        ("/private", "403", ""), ("/login", "200", ""), ("/private", "200", "sid=abc")]

    logged.log.clear()
    r = run_hammer(["load", "-", "-c", "1", "-t", "1"], input_text=lines(login, private))
    assert r.records[1] == private + "\t" and r.error_counter("http_4xx") == 1
    assert [e["ck"] for e in logged.log.entries(at_least=2)] == ["", ""]


BODY_JSON = '{"name": "café \\"quoted\\"", "n": 1}\n'
BODY_FORM = "a=1&b=two words\twith tab\nand a second line"


def test_vegeta_file_headers_and_bodies_arrive_as_written(logged, serve, tmp_path):
    (tmp_path / "bodies").mkdir()
    (tmp_path / "bodies" / "one.json").write_text(BODY_JSON, encoding="utf-8")
    (tmp_path / "form.txt").write_text(BODY_FORM)
    targets = tmp_path / "targets.vegeta"
    targets.write_text(
        "# a vegeta targets file\n"
        f"POST {logged.url('/echo')}\n"
        "Content-Type: application/json\n"
        "X-Test: vegeta-one\n"
        "@bodies/one.json\n"
        "\n"
        f"PUT {logged.url('/echo')}\n"
        "X-Test: vegeta-two\n"
        "Content-Type: text/plain; charset=utf-8\n"
        f"@{tmp_path / 'form.txt'}\n"
        "\n"
        f"GET {logged.url('/echo')}\n"
        "X-Test: vegeta-three\n"
        f"DELETE {logged.url('/echo')}\n")
    r = run_hammer(["load", str(targets), "--targets-format", "vegeta", "-c", "1", "-t", "1",
                    "-H", "X-Global: g"])
    assert r.returncode == 0, r.stderr
    assert len(r.successes()) == 4, r.stderr
    log = logged.log.entries(at_least=4)
    got = [(e["m"], e["u"], e["x"], e["g"], e["ct"], e["b"]) for e in log]
    assert got == [
        ("POST", "/echo", "vegeta-one", "g", "application/json", BODY_JSON),
        ("PUT", "/echo", "vegeta-two", "g", "text/plain; charset=utf-8", BODY_FORM),
        ("GET", "/echo", "vegeta-three", "g", "", ""),
        ("DELETE", "/echo", "", "g", "", ""),
    ]
    assert [e["cl"] for e in log[:2]] == [str(len(BODY_JSON.encode())), str(len(BODY_FORM))]
    assert serve.stats()["by_method"] == {"POST": 1, "PUT": 1, "GET": 1, "DELETE": 1}


def test_jsonl_file_headers_and_bodies_arrive_as_written(logged, serve, tmp_path):
    def b64(text):
        return base64.b64encode(text.encode()).decode()

    rows = [
        {"method": "POST", "url": logged.url("/echo"),
         "header": {"X-Test": ["jsonl-one"], "Content-Type": ["application/json"]},
         "body": b64(BODY_JSON)},
        {"method": "PATCH", "url": logged.url("/echo?q=1"),
         "header": {"X-Test": ["jsonl-two"], "Authorization": ["Bearer t0ken"]},
         "body": b64(BODY_FORM)},
        {"method": "GET", "url": logged.url("/echo"), "header": {"X-Test": ["jsonl-three"]}},
        {"method": "HEAD", "url": logged.url("/echo"), "header": None, "body": None},
    ]
    targets = tmp_path / "targets.jsonl"
    targets.write_text("\n".join(json.dumps(row) for row in rows) + "\n\n")
    r = run_hammer(["load", str(targets), "--targets-format", "jsonl", "-c", "1", "-t", "1"])
    assert r.returncode == 0, r.stderr
    assert len(r.successes()) == 4, r.stderr
    log = logged.log.entries(at_least=4)
    got = [(e["m"], e["u"], e["x"], e["ct"], e["auth"], e["b"]) for e in log]
    assert got == [
        ("POST", "/echo", "jsonl-one", "application/json", "", BODY_JSON),
        ("PATCH", "/echo?q=1", "jsonl-two", "", "Bearer t0ken", BODY_FORM),
        ("GET", "/echo", "jsonl-three", "", "", ""),
        ("HEAD", "/echo", "", "", "", ""),
    ]
    assert serve.stats()["by_method"] == {"POST": 1, "PATCH": 1, "GET": 1, "HEAD": 1}


def test_binary_bodies_are_sent_byte_for_byte(logged, tmp_path):
    blob = bytes(range(256)) * 4
    (tmp_path / "blob.bin").write_bytes(blob)
    vegeta = tmp_path / "t.vegeta"
    vegeta.write_text(f"POST {logged.url('/echo')}\nX-Test: vegeta\n@blob.bin\n")
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text(json.dumps({"method": "POST", "url": logged.url("/echo"),
                                 "header": {"X-Test": ["jsonl"]},
                                 "body": base64.b64encode(blob).decode()}) + "\n")
    for path, fmt in ((vegeta, "vegeta"), (jsonl, "jsonl")):
        r = run_hammer(["load", str(path), "--targets-format", fmt, "-c", "1", "-t", "1"])
        assert r.returncode == 0 and len(r.successes()) == 1, r.stderr
    log = logged.log.entries(at_least=2)
    assert [(e["x"], e["cl"]) for e in log] == [("vegeta", "1024"), ("jsonl", "1024")]
    # nginx's escape=json writes bytes >= 0x80 as they are: compare the bytes.
    assert [e["b"].encode("utf-8", "surrogateescape") for e in log] == [blob, blob]


@pytest.mark.parametrize("fmt,text,line,why", [
    ("vegeta", "GET {u}\nX-Ok: 1\n\nGET {u}\nthis is not a header\n", 5, "expected 'Name: value'"),
    ("vegeta", "# comment\n\nPOST {u}\n@missing-body.bin\n", 4, "body file 'missing-body.bin'"),
    ("vegeta", "GET {u}\n\nGET not-a-url\n", 3, ""),
    ("vegeta", "X-Header-First: 1\nGET {u}\n", 1, "expected 'METHOD URL'"),
    ("jsonl", '{{"method":"GET","url":"{u}"}}\n{{"method":"GET","url":\n', 2, "invalid JSON"),
    ("jsonl", '\n{{"method":"GET"}}\n', 2, "'url' is missing"),
    ("jsonl", '{{"method":"GET","url":"{u}","body":"!!!"}}\n', 1, "'body' is not base64"),
    ("jsonl", '{{"method":"GET","url":"{u}","header":{{"X":"not-a-list"}}}}\n', 1,
     "must be an array of strings"),
    ("jsonl", '[1, 2]\n', 1, "expected a JSON object"),
])
def test_malformed_request_files_name_the_file_and_line(serve, tmp_path, fmt, text, line, why):
    path = tmp_path / f"bad.{fmt}"
    path.write_text(text.format(u=serve.url("/")))
    r = run_hammer(["load", str(path), "--targets-format", fmt, "-c", "1", "-t", "1"])
    assert r.returncode == 2, r.stderr
    message = [m for m in r.stderr.splitlines() if m.startswith("hammer load: ")]
    assert message and message[-1].startswith(f"hammer load: {path}:{line}: "), r.stderr
    assert why in message[-1], r.stderr


# ---------------------------------------------------------------------------------------------
# HAR files: one written by hand with every kind of unsupported entry, one from Chromium.


def har_entry(url, method="GET", started="2026-01-01T00:00:00.000Z", **extra):
    entry = {"startedDateTime": started, "time": 1,
             "request": {"method": method, "url": url, "httpVersion": "HTTP/1.1",
                         "headers": [], "queryString": [], "cookies": [],
                         "headersSize": -1, "bodySize": 0},
             "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                          "headers": [], "cookies": [], "content": {"size": 0},
                          "redirectURL": "", "headersSize": -1, "bodySize": 0},
             "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}}
    entry.update(extra)
    return entry


def test_har_unsupported_entries_are_skipped_with_counts(logged, tmp_path):
    good = har_entry(logged.url("/echo"), "POST")
    good["request"]["headers"] = [{"name": "X-Test", "value": "har"},
                                  {"name": "Host", "value": "dropped.example"},
                                  {"name": ":authority", "value": "dropped"},
                                  {"name": "Content-Length", "value": "999"}]
    good["request"]["postData"] = {"mimeType": "text/plain", "text": "from har"}
    unanswered = har_entry(logged.url("/never"))
    unanswered["response"]["status"] = 0
    entries = [
        good,
        har_entry("data:image/png;base64,iVBORw0KGgo="),
        har_entry("data:text/plain,hello"),
        har_entry("ws://127.0.0.1:1/socket"),
        har_entry("blob:http://127.0.0.1/uuid"),
        har_entry(logged.url("/cached"), _fromCache="memory"),
        har_entry(logged.url("/cached-too"), _fromCache="disk"),
        unanswered,
        {"startedDateTime": "2026-01-01T00:00:00Z"},  # no request at all
        har_entry(logged.url("/bad-method"), "GE T"),
        har_entry(logged.url("/")),
    ]
    har = tmp_path / "mixed.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "test"},
                                       "entries": entries}}))
    r = run_hammer(["load", "--har", str(har), "-c", "1", "-t", "1"])
    assert r.returncode == 0, r.stderr
    assert len(r.successes()) == 2, r.stderr
    skipped = {m.group(2): int(m.group(1)) for m in
               re.finditer(r"^  skipped +(\d+) request-file entries: (.+)$", r.stderr, re.M)}
    assert skipped == {"data: URL": 2, "ws: URL": 1, "blob: URL": 1, "served from cache": 2,
                       "no response": 1, "malformed entry": 1, "invalid method": 1}, r.stderr
    log = logged.log.entries(at_least=2)
    assert [(e["m"], e["u"], e["x"], e["b"], e["cl"]) for e in log] == [
        ("POST", "/echo", "har", "from har", "8"), ("GET", "/", "", "", "")]


PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>loading</title></head>
<body>
<img src="/pixel.png" alt="pixel">
<img src="data:image/png;base64,{pixel}" alt="inline">
<script>
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
window.addEventListener('load', async () => {{
  await pause(150);
  await fetch('/api/one', {{headers: {{'X-Test': 'one'}}}});
  await pause(150);
  await fetch('/api/two', {{method: 'POST', body: 'x=1',
    headers: {{'Content-Type': 'application/x-www-form-urlencoded', 'X-Test': 'two'}}}});
  document.title = 'done';
}});
</script>
</body></html>
"""


@pytest.fixture(scope="module")
def chromium_site(tmp_path_factory):
    """nginx serving a page whose script fetches two API URLs, plus a HAR of Chromium visiting
    it. Module-scoped: recording takes a few seconds."""
    why = chromium_har.available()
    if why:
        pytest.skip(why)
    tmp = tmp_path_factory.mktemp("chromium")
    # nginx's workers run as nobody and pytest's tmp dirs are private: the pages go elsewhere.
    site = Path(tempfile.mkdtemp(prefix="hammer-site-"))
    site.chmod(0o755)
    pixel = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AA"
                             "AAMBAQDJ/pLvAAAAAElFTkSuQmCC")
    (site / "pixel.png").write_bytes(pixel)
    (site / "index.html").write_text(PAGE.format(pixel=base64.b64encode(pixel).decode()))
    for f in site.iterdir():
        f.chmod(0o644)
    serve = nginx = None
    try:
        serve = HammerServe()
        log = AccessLog(tmp / "access.log")
        nginx = Nginx(http_extra=LOG_FORMAT, server_extra=f"""
    access_log {log.path} hammer_json;
    location = /index.html {{ root {site}; }}
    location = /pixel.png {{ root {site}; }}
    location = /favicon.ico {{ return 404; }}
    location /api/ {{ rewrite ^ /echo break; proxy_pass http://{serve.address}; }}""")
        har = chromium_har.record_har(nginx.url("/index.html"), tmp / "page.har", tmp)
        yield nginx, log, har
    finally:
        if nginx:
            nginx.stop()
        if serve:
            serve.stop()
        shutil.rmtree(site, ignore_errors=True)


def http_entries(har_path):
    entries = json.loads(Path(har_path).read_text())["log"]["entries"]
    return [e for e in entries if e["request"]["url"].startswith("http")], \
           [e for e in entries if e["request"]["url"].startswith("data:")]


def test_har_from_chromium_is_replayed(chromium_site, tmp_path):
    nginx, log, har = chromium_site
    http, data = http_entries(har)
    # What the browser did, as recorded (the favicon request, if any, is not in Playwright's HAR).
    paths = [e["request"]["url"].split(str(nginx.port), 1)[1] for e in http]
    assert paths == ["/index.html", "/pixel.png", "/api/one", "/api/two"], paths
    assert len(data) == 1
    post = http[3]["request"]
    assert post["method"] == "POST" and post["postData"]["text"] == "x=1"

    log.clear()
    summary = tmp_path / "s.json"
    r = run_hammer(["load", "--har", str(har), "-c", "1", "-t", "1",
                    "--summary-json", str(summary)])
    assert r.returncode == 0, r.stderr
    assert [rec.split("\t")[0] for rec in r.records] == [e["request"]["url"] for e in http]
    assert summary_of(summary)["succeeded"] == 4, r.stderr
    assert "skipped      1 request-file entries: data: URL" in r.stderr
    got = log.entries(at_least=4)
    assert [(e["m"], e["u"], e["x"], e["b"], e["ct"]) for e in got] == [
        ("GET", "/index.html", "", "", ""),
        ("GET", "/pixel.png", "", "", ""),
        ("GET", "/api/one", "one", "", ""),
        ("POST", "/api/two", "two", "x=1", "application/x-www-form-urlencoded"),
    ]
    # The browser's own headers are replayed, not hammer's.
    assert all("Chrome" in e["ua"] for e in got), [e["ua"] for e in got]


def test_har_timing_keeps_order_and_gaps(chromium_site, tmp_path):
    nginx, log, har = chromium_site
    http, _ = http_entries(har)

    def epoch(text):
        import datetime
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()

    recorded = [epoch(e["startedDateTime"]) for e in http]
    span = recorded[-1] - recorded[0]
    assert span >= 0.25, recorded  # the page pauses 150 ms twice
    log.clear()
    summary = tmp_path / "s.json"
    # Enough slots for all four at once: only the recorded offsets keep them apart.
    r = run_hammer(["load", "--har", str(har), "--har-timing", "-c", "8", "-t", "1",
                    "--summary-json", str(summary)])
    assert r.returncode == 0, r.stderr
    got = log.entries(at_least=4)
    assert [e["u"] for e in got] == ["/index.html", "/pixel.png", "/api/one", "/api/two"]
    arrived = [float(e["t"]) for e in got]
    for i in range(1, len(got)):
        recorded_gap = recorded[i] - recorded[0]
        replayed_gap = arrived[i] - arrived[0]
        assert replayed_gap >= recorded_gap - 0.005, (i, recorded_gap, replayed_gap)
        assert replayed_gap <= recorded_gap + 0.25, (i, recorded_gap, replayed_gap)
    assert summary_of(summary)["seconds"] >= span - 0.005


# ---------------------------------------------------------------------------------------------
# Thresholds.


def threshold_lines(stderr):
    return [line.split() for line in stderr.splitlines() if line.startswith("  threshold ")]


def test_thresholds_pass_exit_0(serve):
    key = serve.url("/delay/5")
    r = run_hammer(["load", "-", "-c", "4", "-t", "1", "--threshold", "p99<5s",
                    "--threshold", "errors<1%", "--threshold", "rps>1",
                    "--threshold", f"p50<2s@{key}"],
                   input_text=lines(*[serve.url("/")] * 40, *[key] * 10))
    assert r.returncode == 0, r.stderr
    rows = threshold_lines(r.stderr)
    assert [(row[1], row[2]) for row in rows] == [
        ("p99<5s", "passed"), ("errors<1%", "passed"), ("rps>1", "passed"),
        (f"p50<2s@{key}", "passed")], r.stderr
    assert "FAILED" not in r.stderr and "thresholds failed" not in r.stderr


def test_thresholds_fail_exit_3_with_the_measured_values(serve):
    text = lines(*[serve.url("/delay/20")] * 20, *[serve.url("/status/500")] * 3)
    args = ["load", "-", "-c", "4", "-t", "1", "--threshold", "p99<1ms",
            "--threshold", "errors<1%", "--threshold", "rps>1"]
    r = run_hammer(args, input_text=text)
    assert r.returncode == 3, r.stderr
    rows = {row[1]: row[2] for row in threshold_lines(r.stderr)}
    assert rows == {"p99<1ms": "FAILED", "errors<1%": "FAILED", "rps>1": "passed"}, r.stderr
    p99 = [line for line in r.stderr.splitlines() if "threshold p99<1ms" in line][0]
    assert "FAILED" in p99 and "p99 = " in p99 and "limit < 1ms" in p99, p99
    measured_ms = float(p99.split("p99 = ")[1].split("ms")[0])
    assert measured_ms >= 20, p99
    errors = [line for line in r.stderr.splitlines() if "threshold errors<1%" in line][0]
    assert "FAILED" in errors and "errors = 13.04% (3 of 23 requests)" in errors, errors
    assert "hammer load: 2 of 3 thresholds failed" in r.stderr
    # The records are all there all the same.
    assert len(r.records) == 23

    # In Hadoop mode the task must not fail: exit 0, and a counter says how many failed.
    r = run_hammer(args + ["--hadoop"], input_text=text)
    assert r.returncode == 0, r.stderr
    assert r.counters.get(("threshold", "failed")) == 2, r.stderr
    assert "thresholds failed" not in r.stderr


# ---------------------------------------------------------------------------------------------
# Operator flags: --dry-run, --verbose, --start-at, --key-pattern.


def test_dry_run_prints_redacted_heads_and_sends_nothing(serve):
    text = lines(*[f"POST {serve.url('/echo')}"] * 12)
    r = run_hammer(["load", "-", "--dry-run", "-H", "Authorization: Bearer s3cret-token",
                    "-H", "Cookie: session=s3cret-cookie; theme=dark", "--body", "payload"],
                   input_text=text)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "Authorization: [redacted]" in out, out
    assert "Cookie: session=[redacted]; theme=[redacted]" in out, out
    assert "s3cret" not in out + r.stderr
    assert out.count("POST /echo HTTP/1.1") == 10  # the first 10 by default
    assert "# 10:" in out and "# 11:" not in out
    assert serve.stats()["requests"] == 0
    r = run_hammer(["load", "-", "--dry-run", "-n", "3"], input_text=text)
    assert r.stdout.count("POST /echo HTTP/1.1") == 3
    assert serve.stats()["requests"] == 0


def test_verbose_redacts_authorization_and_cookies(serve):
    text = lines(serve.url("/cookie/set"), serve.url("/cookie/check"), serve.url("/"))
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--cookies", "--verbose", "2",
                    "-H", "Authorization: Basic dXNlcjpzM2NyZXQ="], input_text=text)
    assert r.returncode == 0, r.stderr
    assert len(r.successes()) == 3
    err = r.stderr
    assert err.count("> Authorization: [redacted]") == 2, err
    assert "< Set-Cookie: hammer=[redacted]; Path=/" in err, err
    assert "> Cookie: hammer=[redacted]" in err, err
    assert "dXNlcjpzM2NyZXQ=" not in err + r.stdout
    assert err.count("> GET ") == 2  # --verbose 2: two pairs, not three
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--verbose", "1"], input_text=text)
    assert r.stderr.count("> GET ") == 1


def test_start_at_delays_the_first_request(logged):
    start = time.time() + 1.5
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(start)) + \
        ".%03dZ" % int((start % 1) * 1000)
    t0 = time.time()
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--start-at", stamp],
                   input_text=lines(logged.url("/"), logged.url("/")))
    wall = time.time() - t0
    assert r.returncode == 0, r.stderr
    assert "for --start-at" in r.stderr
    assert wall >= start - t0 - 0.01, (wall, start - t0)
    arrived = [float(e["t"]) for e in logged.log.entries(at_least=2)]
    # nginx's $msec is the time the request was logged; none can predate --start-at.
    assert len(arrived) == 2 and min(arrived) >= start - 0.002, (arrived, start)
    assert max(arrived) < start + 1.0

    # Unix seconds work too; a time in the past starts at once.
    logged.log.clear()
    start = int(time.time()) + 2
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--start-at", str(start)],
                   input_text=lines(logged.url("/")))
    assert r.returncode == 0, r.stderr
    assert float(logged.log.entries(at_least=1)[0]["t"]) >= start - 0.002
    t0 = time.time()
    r = run_hammer(["load", "-", "-c", "1", "--start-at", "2020-01-01T00:00:00Z"],
                   input_text=lines(logged.url("/")))
    assert r.returncode == 0 and time.time() - t0 < 1.0, r.stderr
    r = run_hammer(["load", "-", "--start-at", "tomorrow"], input_text=lines(logged.url("/")))
    assert r.returncode == 2 and "--start-at" in r.stderr


def test_key_pattern_collapses_ids_into_one_key(serve, tmp_path):
    summary = tmp_path / "s.json"
    text = lines(*[serve.url(f"/item/{i}") for i in range(1, 6)], serve.url("/other"))
    r = run_hammer(["load", "-", "-c", "2", "-t", "1", "--key", "path",
                    "--key-pattern", "^/item/[0-9]+$=/item/:id", "--summary-json", str(summary)],
                   input_text=text)
    assert r.returncode == 0, r.stderr
    assert collections.Counter(rec.split("\t")[0] for rec in r.records) == \
        {"/item/:id": 5, "/other": 1}
    assert {k["key"]: k["count"] for k in summary_of(summary)["keys"]} == \
        {"/item/:id": 5, "/other": 1}
    # With --key url the pattern matches inside the URL and the whole key becomes NAME.
    r = run_hammer(["load", "-", "-c", "2", "-t", "1", "--key-pattern", "/item/[0-9]+=/item/:id"],
                   input_text=text)
    assert collections.Counter(rec.split("\t")[0] for rec in r.records) == \
        {"/item/:id": 5, serve.url("/other"): 1}


# ---------------------------------------------------------------------------------------------
# Concurrency on short request files (a HAR, a small list) with more than one thread.


def test_concurrency_is_honoured_for_a_short_list_with_two_threads(serve, tmp_path):
    summary = tmp_path / "s.json"
    r = run_hammer(["load", "-", "-c", "8", "-t", "2", "--summary-json", str(summary)],
                   input_text=lines(*[serve.url("/delay/100")] * 8))
    assert r.returncode == 0, r.stderr
    s = summary_of(summary)
    assert s["succeeded"] == 8
    assert s["connections_opened"] == 8, s  # all 8 in flight at once
    assert s["seconds"] < 0.19, s
