"""`hammer load --http2` against real HTTP/2 servers on loopback (issue 15): nginx with h2c
(prior knowledge) and with TLS (ALPN h2), -c connections carrying -m streams each, a server that
does not speak HTTP/2 (a clear error, or HTTP/1.1 with --http2-fallback), and the failures
HTTP/2 adds (a stream reset by the server, GOAWAY).

What nginx received is read from its access log ($server_protocol, $connection), so the
protocol and the number of connections are checked on the server's side.
"""
import collections
import json
import time
from pathlib import Path

import pytest

from harness import Nginx, free_port, run_hammer, wait_for_port
from tls_pki import make_pki

LOG_FORMAT = ("log_format h2log escape=json "
              "'{\"p\":\"$server_protocol\",\"c\":\"$connection\",\"u\":\"$request_uri\","
              "\"m\":\"$request_method\",\"s\":\"$status\",\"alpn\":\"$ssl_protocol\"}';")


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


class H2Nginx:
    """nginx on one loopback port: h2c (`listen ... http2`), TLS with h2 (`ssl http2`), or
    plain HTTP/1.1 and TLS without h2, logging each request's protocol and connection."""

    def __init__(self, tmp_path, mode, pki=None, extra=""):
        self.log = Path(tmp_path) / f"{mode}-access.log"
        self.log.touch()
        self.port = free_port()
        listen = {
            "h2c": f"listen 127.0.0.1:{self.port} http2;",
            "h2": f"listen 127.0.0.1:{self.port} ssl http2;",
            "http1": f"listen 127.0.0.1:{self.port};",
            "tls-http1": f"listen 127.0.0.1:{self.port} ssl;",
        }[mode]
        tls = (f"ssl_certificate {pki.server_cert}; ssl_certificate_key {pki.server_key};"
               if mode in ("h2", "tls-http1") else "")
        self.scheme = "https" if tls else "http"
        # The harness's own server block listens on another port; this one is the test's.
        self.nginx = Nginx(http_extra=LOG_FORMAT + f"""
  server {{
    {listen}
    {tls}
    access_log {self.log} h2log;
    {extra}
    location = /reset {{ return 444; }}
    location = /status/503 {{ return 503 "busy\\n"; }}
    location / {{ default_type text/plain; return 200 "ok\\n"; }}
  }}""")
        wait_for_port(self.port)

    def url(self, path="/"):
        return f"{self.scheme}://127.0.0.1:{self.port}{path}"

    def entries(self, at_least=0, timeout=5.0):
        deadline = time.monotonic() + timeout
        while True:
            lines = [line for line in self.log.read_text().split("\n") if line]
            if len(lines) >= at_least or time.monotonic() > deadline:
                return [json.loads(line) for line in lines]
            time.sleep(0.02)

    def stop(self):
        self.nginx.stop()


@pytest.fixture
def h2nginx(tmp_path):
    started = []

    def start(mode, pki=None, extra=""):
        server = H2Nginx(tmp_path, mode, pki, extra)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def load(url, *args, n=200, tmp_path=None, extra_input=None):
    summary = Path(tmp_path) / "summary.json"
    r = run_hammer(["load", "--http2", "--loop", "-n", str(n), "--summary-json", str(summary),
                    "-t", "1", *args], input_text=extra_input or url + "\n")
    s = json.loads(summary.read_text()) if summary.exists() else None
    return r, s


def test_h2c_prior_knowledge_with_connections_and_streams(h2nginx, tmp_path):
    server = h2nginx("h2c")
    r, s = load(server.url("/a"), "-c", "2", "-m", "10", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (s["succeeded"], s["failed"]) == (200, 0), r.stderr
    assert len(r.successes()) == 200
    entries = server.entries(at_least=200)
    assert len(entries) == 200
    assert {e["p"] for e in entries} == {"HTTP/2.0"}
    # -c 2 -m 10: exactly two connections carried the 200 streams
    assert len({e["c"] for e in entries}) == 2
    assert s["connections_opened"] == 2


def test_h2_over_tls_negotiates_alpn(h2nginx, pki, tmp_path):
    server = h2nginx("h2", pki)
    r, s = load(server.url("/tls"), "-c", "1", "-m", "8", "--cacert", str(pki.ca), n=64,
                tmp_path=tmp_path)
    assert (s["succeeded"], s["failed"]) == (64, 0), r.stderr
    entries = server.entries(at_least=64)
    assert {e["p"] for e in entries} == {"HTTP/2.0"}
    assert len({e["c"] for e in entries}) == 1
    assert s["tls_handshakes"] == 1


def test_open_loop_latency_counts_from_the_due_time(h2nginx, tmp_path):
    server = h2nginx("h2c")
    r, s = load(server.url("/paced"), "-c", "1", "-m", "4", "--rate", "400", n=200,
                tmp_path=tmp_path)
    assert (s["succeeded"], s["failed"]) == (200, 0), r.stderr
    assert s["open_loop"] is True and "uncorrected_latency" in s
    assert "from intended send time" in r.stderr


def test_a_server_without_http2_is_a_clear_protocol_error(h2nginx, pki, tmp_path):
    plain = h2nginx("http1")
    r, s = load(plain.url("/"), "-c", "1", n=5, tmp_path=tmp_path)
    assert r.returncode == 0
    assert (s["succeeded"], s["failed"]) == (0, 5)
    assert s["failures"] == {"protocol": 5}
    assert "does not speak HTTP/2" in r.stderr and "HTTP/1.x" in r.stderr

    tls = h2nginx("tls-http1", pki)
    r, s = load(tls.url("/"), "-c", "1", "--cacert", str(pki.ca), n=5, tmp_path=tmp_path)
    assert s["failures"] == {"protocol": 5}, r.stderr
    assert "chose http/1.1 in ALPN" in r.stderr


def test_fallback_speaks_http11_to_a_server_without_http2(h2nginx, pki, tmp_path):
    plain = h2nginx("http1")
    r, s = load(plain.url("/fb"), "-c", "2", "-m", "4", "--http2-fallback", n=40,
                tmp_path=tmp_path)
    assert (s["succeeded"], s["failed"]) == (40, 0), r.stderr
    entries = plain.entries(at_least=42)
    served = [e for e in entries if e["u"] == "/fb"]
    assert len(served) == 40 and {e["p"] for e in served} == {"HTTP/1.1"}
    # The h2c attempts: nginx read each preface as a bad request (one per connection tried).
    attempts = [e for e in entries if e["u"] != "/fb"]
    assert 1 <= len(attempts) <= 2 and {e["s"] for e in attempts} == {"400"}

    tls = h2nginx("tls-http1", pki)
    r, s = load(tls.url("/fb"), "-c", "2", "-m", "4", "--http2-fallback", "--cacert",
                str(pki.ca), n=40, tmp_path=tmp_path)
    assert (s["succeeded"], s["failed"]) == (40, 0), r.stderr
    assert {e["p"] for e in tls.entries(at_least=40)} == {"HTTP/1.1"}


def test_stream_reset_by_the_server_is_its_own_failure_type(h2nginx, tmp_path):
    server = h2nginx("h2c")
    r, s = load(server.url("/reset"), "-c", "1", "-m", "2", "--hadoop-counters", n=10,
                tmp_path=tmp_path)
    assert s["failures"] == {"stream_reset": 10}, r.stderr
    assert r.error_counter("stream_reset") == 10
    assert "stream reset by the server" in r.stderr


def test_graceful_goaway_moves_streams_to_a_new_connection(h2nginx, tmp_path):
    # nginx ends a connection with GOAWAY(NO_ERROR) after keepalive_requests streams; streams
    # beyond its last stream id are refused and sent again on a new connection.
    server = h2nginx("h2c", extra="keepalive_requests 7;")
    r, s = load(server.url("/g"), "-c", "1", "-m", "5", n=100, tmp_path=tmp_path)
    assert (s["succeeded"], s["failed"]) == (100, 0), r.stderr
    entries = server.entries(at_least=100)
    assert len(entries) == 100
    per_connection = collections.Counter(e["c"] for e in entries)
    assert max(per_connection.values()) <= 7
    assert s["connections_opened"] >= 100 // 7


def test_http_status_failures_and_records_are_unchanged(h2nginx, tmp_path):
    server = h2nginx("h2c")
    urls = server.url("/ok") + "\n" + server.url("/status/503") + "\n"
    r, s = load(server.url("/ok"), "-c", "1", "-m", "4", n=20, tmp_path=tmp_path,
                extra_input=urls)
    assert s["failures"] == {"http_5xx": 10}, r.stderr
    ok = [rec for rec in r.records if rec.startswith(server.url("/ok") + "\t")]
    assert len(ok) == 10 and all(float(rec.split("\t")[1]) > 0 for rec in ok)
    assert len([rec for rec in r.records if rec == server.url("/status/503") + "\t"]) == 10


def test_max_streams_without_http2_is_a_usage_error():
    r = run_hammer(["load", "-m", "4", "-n", "1"], input_text="http://127.0.0.1:1/\n")
    assert r.returncode == 2
    assert "--max-streams needs --http2" in r.stderr
