"""`hammer dark --http2` accepts HTTP/2 clients (issue 15, item 3): each stream is forwarded like
an HTTP/1.1 request (HTTP/1.1 to the upstream and the dark clusters), with the same
eligibility, strategies, trust rules and limits. Real clients: curl (--http2-prior-knowledge,
--http2 over TLS), nghttp, h2load and h2spec, through the proxy to nginx and `hammer serve`.
Frames are written by hand (h2_support.frame, named in each test) only for the floods and bombs
no client library sends: a CONTINUATION flood, a rapid reset, an HPACK bomb.

What the upstreams received is read from their own counts (`hammer serve`'s /_hammer/stats,
nghttp and h2load's reports), and what the proxy refused from its /metrics.
"""
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

import pytest

from dark_support import report_endpoint
from h2_support import H2_PREFACE, frame, h2spec_run, request_block
from harness import NGINX_BASE, Nginx, memory_kib, run_hammer, started_until_teardown
from prerequisites import require_program

END_STREAM, END_HEADERS = 0x1, 0x4
HEADERS, RST_STREAM, SETTINGS, GOAWAY, CONTINUATION = 0x1, 0x3, 0x4, 0x7, 0x9
CANCEL, ENHANCE_YOUR_CALM = 0x8, 0xB


@pytest.fixture
def nginx_upstreams():
    yield from started_until_teardown(Nginx)


def curl(*args):
    return subprocess.run(["curl", "-sS", "--max-time", "30", *args], capture_output=True,
                          timeout=90)


def forked(servers, proxies, *extra, upstream=None):
    """A proxy accepting HTTP/2, its regular upstream and one dark instance (every eligible
    request copied once: Nd/Ns = 1)."""
    regular = upstream or servers()
    dark = servers()
    proxy = proxies("--http2", "--upstream", f"http://{regular.address}",
                    "--dark", f"canary=http://{dark.address}", "--regular-instances", "1",
                    *extra)
    return regular, dark, proxy


def rejected(proxy, reason):
    return proxy.metrics()[f'hammer_dark_rejected_total{{reason="{reason}"}}']


def test_curl_h2c_is_forwarded_in_http11_and_forked_like_http11(servers, proxies):
    regular, dark, proxy = forked(servers, proxies)
    r = curl("--http2-prior-knowledge", "-w", "\n%{http_version} %{response_code}",
             "-H", "X-Test: one", "-H", "X-Hammer-Dark: forged", proxy.url("/echo?q=1"))
    body, trailer = r.stdout.decode().rsplit("\n", 1)
    assert trailer == "2 200", r.stderr
    echo = json.loads(body)
    headers = {k.lower(): v for k, v in echo["headers"].items()}
    assert (echo["method"], echo["path"]) == ("GET", "/echo?q=1")
    assert headers["x-test"] == "one"
    assert headers["x-forwarded-for"] == "127.0.0.1"  # added by the proxy, as for HTTP/1.1
    assert "x-hammer-dark" not in headers  # the client's own is never passed on
    # An unsafe method is served and not copied; the same port still speaks HTTP/1.1.
    r = curl("--http2-prior-knowledge", "-o", os.devnull, "-w", "%{http_version} %{response_code}",
             "--data-binary", "payload", proxy.url("/echo"))
    assert r.stdout == b"2 200"
    r = curl("--http1.1", "-o", os.devnull, "-w", "%{http_version}", proxy.url("/"))
    assert r.stdout == b"1.1"
    m = proxy.settled_metrics()
    assert regular.stats()["by_protocol"] == {"HTTP/1.1": 3, "HTTP/2": 0}
    assert regular.stats()["by_method"] == {"GET": 2, "POST": 1}
    assert dark.stats()["by_method"] == {"GET": 2}
    assert dark.stats()["by_header"]["X-Hammer-Dark"] == 2
    assert m["hammer_dark_requests_total"] == 3
    assert m["hammer_dark_http2_requests_total"] == 2
    assert m["hammer_dark_client_dark_headers_removed_total"] == 1


def test_curl_http2_over_tls_and_a_streamed_response(servers, proxies, pki):
    regular, dark, proxy = forked(servers, proxies, "--tls-cert", str(pki.server_cert),
                                  "--tls-key", str(pki.server_key))
    resolve = ["--cacert", str(pki.ca), "--resolve", f"localhost:{proxy.port}:127.0.0.1"]
    url = f"https://localhost:{proxy.port}"
    r = curl("--http2", *resolve, "-w", "%{http_version} %{size_download}", "-o", os.devnull,
             url + "/bytes/100000")
    assert r.stdout == b"2 100000", r.stderr
    # Above --stream-threshold (1 MiB) the answer is streamed to the HTTP/2 client, whole.
    direct = curl(regular.url("/bytes/3000000")).stdout
    r = curl("--http2", *resolve, "-w", "\n%{http_version}", url + "/bytes/3000000")
    body, version = r.stdout.rsplit(b"\n", 1)
    assert version == b"2", r.stderr
    assert len(body) == 3_000_000
    assert hashlib.sha256(body).digest() == hashlib.sha256(direct).digest()
    r = curl("--http1.1", *resolve, "-w", "%{http_version}", "-o", os.devnull, url + "/")
    assert r.stdout == b"1.1"
    m = proxy.settled_metrics()
    # Both long answers flowed as they came (an answer not whole after 64 KiB read in one pass
    # is streamed), to HTTP/2 and HTTP/1.1 clients alike; the short one was held.
    assert m['hammer_dark_streamed_bodies_total{direction="response"}'] == 2
    assert m["hammer_dark_http2_requests_total"] == 2
    assert dark.stats()["requests"] == 3  # every GET copied, whatever its protocol


def test_a_body_over_the_stream_threshold_is_not_copied(servers, proxies, tmp_path):
    regular, dark, proxy = forked(servers, proxies, "--allow", "^/upload")
    big = tmp_path / "big"
    big.write_bytes(b"x" * (2 << 20))  # over --stream-threshold (1 MiB), under the 16 MiB cap
    for body in ("@" + str(big), "small"):
        r = curl("--http2-prior-knowledge", "-o", os.devnull, "-w", "%{response_code}",
                 "--data-binary", body, proxy.url("/upload"))
        assert r.stdout == b"200", r.stderr
    m = proxy.settled_metrics()
    assert regular.stats()["by_method"] == {"POST": 2}
    assert dark.stats()["by_method"] == {"POST": 1}  # the small one only
    assert m['hammer_dark_skipped_streamed_total{cluster="canary"}'] == 1


def test_nghttp_streams_through_the_proxy_to_nginx(servers, proxies, nginx_upstreams):
    require_program("nghttp", "nghttp2-client")
    regular, dark, proxy = forked(servers, proxies, upstream=nginx_upstreams())
    r = subprocess.run(["nghttp", "-n", "-s", "-m", "20", proxy.url("/x")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = re.findall(r"^\s*(\d+)\s+\+\S+\s+\+\S+\s+\S+\s+200\s+3\s+/x$", r.stdout, re.M)
    assert len(set(rows)) == 20, r.stdout[-3000:]  # nginx's "ok\n" on 20 streams
    m = proxy.settled_metrics()
    assert m["hammer_dark_http2_requests_total"] == 20
    assert dark.stats()["requests"] == 20


def test_h2load_exact_counts_h2c_and_tls(servers, proxies, nginx_upstreams, pki):
    require_program("h2load", "nghttp2-client")
    regular, dark, proxy = forked(servers, proxies)
    r = subprocess.run(["h2load", "-n", "2000", "-c", "4", "-m", "10", proxy.url("/")],
                       capture_output=True, text=True, timeout=300)
    assert "2000 succeeded, 0 failed" in r.stdout, r.stdout + r.stderr
    assert regular.stats()["by_protocol"] == {"HTTP/1.1": 2000, "HTTP/2": 0}
    m = proxy.settled_metrics()
    # Every copy decided is sent or, past --dark-max-in-flight, dropped and counted.
    assert dark.stats()["requests"] + m['hammer_dark_dropped_total{cluster="canary"}'] == 2000

    nginx = nginx_upstreams()
    tls = proxies("--http2", "--upstream", f"http://{nginx.address}", "--tls-cert",
                  str(pki.server_cert), "--tls-key", str(pki.server_key))
    r = subprocess.run(["h2load", "-n", "500", "-c", "2", "-m", "8",
                        f"https://127.0.0.1:{tls.port}/"], capture_output=True, text=True,
                       timeout=300)
    assert "Application protocol: h2" in r.stdout, r.stdout
    assert "500 succeeded, 0 failed" in r.stdout, r.stdout
    assert tls.metrics()["hammer_dark_http2_requests_total"] == 500


def test_without_http2_the_preface_is_refused(servers, proxies):
    regular = servers()
    proxy = proxies("--upstream", f"http://{regular.address}")
    r = curl("--http2-prior-knowledge", "-o", os.devnull, proxy.url("/"))
    assert r.returncode != 0
    assert regular.stats()["requests"] == 0


def test_the_stream_and_header_limits_are_announced_and_enforced(servers, proxies):
    require_program("nghttp", "nghttp2-client")
    regular, dark, proxy = forked(servers, proxies, "--max-concurrent-streams", "7")
    r = subprocess.run(["nghttp", "-n", "-v", proxy.url("/")], capture_output=True, text=True,
                       timeout=60)
    received = r.stdout.split("recv SETTINGS frame", 1)[1].split("send SETTINGS frame", 1)[0]
    assert "[SETTINGS_MAX_CONCURRENT_STREAMS(0x03):7]" in received, r.stdout[:3000]
    assert "[SETTINGS_MAX_HEADER_LIST_SIZE(0x06):65536]" in received, r.stdout[:3000]
    # 200 fields of 300 bytes: over the 128 fields and the 64 KiB list (RFC 9113 counts 32
    # bytes more per field), in a block under the 64 KiB that HTTP/2 clients send at most.
    many = [arg for i in range(200) for arg in ("-H", f"X-H{i}: " + "b" * 300)]
    r = curl("--http2-prior-knowledge", "-o", os.devnull, "-w", "%{response_code}", *many,
             proxy.url("/"))
    assert r.stdout == b"431", r.stderr
    assert rejected(proxy, "head_too_large") == 1
    assert regular.stats()["requests"] == 1  # nghttp's only


def exchange(address, data, seconds=15):
    """Sends hand-made frames after the preface and reads until the proxy closes (or `seconds`
    pass). Returns what was read and whether the proxy closed the connection."""
    host, port = address.rsplit(":", 1)
    got = b""
    with socket.create_connection((host, int(port)), timeout=seconds) as s:
        s.sendall(H2_PREFACE + frame(SETTINGS, 0, 0) + data)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, BrokenPipeError):
                return got, True
            except socket.timeout:
                break
            if not chunk:
                return got, True
            got += chunk
    return got, False


def frames(data):
    """(type, flags, stream, payload) of every whole frame in `data`."""
    out = []
    while len(data) >= 9:
        n = int.from_bytes(data[:3], "big")
        if len(data) < 9 + n:
            break
        out.append((data[3], data[4], int.from_bytes(data[5:9], "big") & 0x7FFFFFFF,
                    data[9:9 + n]))
        data = data[9 + n:]
    return out


def goaway_code(data):
    codes = [int.from_bytes(p[4:8], "big") for t, _, _, p in frames(data) if t == GOAWAY]
    assert codes, frames(data)
    return codes[-1]


def test_continuation_flood_is_refused_and_counted(servers, proxies):
    regular, dark, proxy = forked(servers, proxies)
    # Hand-made: a HEADERS frame without END_HEADERS, then CONTINUATION frames that never end it
    # (CVE-2024-28182); no client library sends this.
    flood = frame(HEADERS, 0, 1, request_block("/")[:2])
    flood += b"".join(frame(CONTINUATION, 0, 1, b"\x00\x01a\x01b") for _ in range(50))
    got, closed = exchange(proxy.address, flood)
    assert closed  # with GOAWAY when nghttp2 can still send one
    assert rejected(proxy, "http2_protocol_error") == 1
    assert regular.stats()["requests"] == 0


def test_rapid_reset_is_refused_and_counted(servers, proxies):
    regular, dark, proxy = forked(servers, proxies)
    # Hand-made: 150 streams each reset by the client right after its HEADERS (CVE-2023-44487).
    attack = b"".join(
        frame(HEADERS, END_STREAM | END_HEADERS, i, request_block("/delay/2000")) +
        frame(RST_STREAM, 0, i, CANCEL.to_bytes(4, "big")) for i in range(1, 301, 2))
    got, closed = exchange(proxy.address, attack)
    assert closed
    assert goaway_code(got) == ENHANCE_YOUR_CALM
    assert rejected(proxy, "rapid_reset") == 1
    # Each stream was one request to the proxy; none is answered to a client who left.
    assert proxy.metrics()["hammer_dark_http2_requests_total"] <= 150


def test_hpack_bomb_is_answered_431_and_counted(servers, proxies):
    regular, dark, proxy = forked(servers, proxies)
    # Hand-made: one 4000-byte field added to the HPACK dynamic table, then referenced 30 times
    # in the same block (1 byte each, 4 KB each once expanded: 120 KB against a 64 KiB limit).
    value = b"v" * 4000
    length = bytes([0x7F]) + bytes([(4000 - 127) % 128 | 0x80, (4000 - 127) // 128])
    block = request_block("/") + b"\x40\x06x-bomb" + length + value + b"\xbe" * 30
    # The client's own GOAWAY after it: the proxy answers stream 1, then closes.
    got, closed = exchange(proxy.address, frame(HEADERS, END_STREAM | END_HEADERS, 1, block) +
                           frame(GOAWAY, 0, 0, (0).to_bytes(8, "big")))
    assert closed
    assert any(t == HEADERS and s == 1 for t, _, s, _ in frames(got)), frames(got)
    assert rejected(proxy, "head_too_large") == 1
    assert regular.stats()["requests"] == 0


def test_h2spec_h2c(servers, proxies, tmp_path):
    regular, dark, proxy = forked(servers, proxies)
    r, cases, passed, not_passed = h2spec_run(proxy.port, tmp_path)
    print(f"h2spec against hammer dark, h2c: {passed} of {cases} passed")
    assert cases >= 145, r.stdout[-2000:]
    assert not_passed == [], not_passed


def test_h2spec_tls(servers, proxies, pki, tmp_path):
    regular, dark, proxy = forked(servers, proxies, "--tls-cert", str(pki.server_cert),
                                  "--tls-key", str(pki.server_key))
    r, cases, passed, not_passed = h2spec_run(proxy.port, tmp_path, "-t", "-k")
    print(f"h2spec against hammer dark, TLS: {passed} of {cases} passed")
    assert cases >= 145, r.stdout[-2000:]
    assert not_passed == [], not_passed


def test_the_canary_verdict_judges_http2_traffic_as_http11(servers, proxies):
    """The comparison and the verdict see an HTTP/2 stream as the request it carries: a canary
    that changes a field in 5% of its answers fails on diff_rate, found in its endpoint."""
    primary, secondary = servers("--threads", "1"), servers("--threads", "1")
    canary = servers("--threads", "1", "--mutate", "price=0.05")
    proxy = proxies("--http2", "--upstream", f"http://{primary.address}",
                    "--dark", f"canary=http://{canary.address}", "--regular-instances", "1",
                    "--compare", "--compare-secondary", f"http://{secondary.address}")
    n = 2000
    lines = "".join(proxy.url(f"/json/{i % 50}") + "\n" for i in range(n))
    r = run_hammer(["load", "-", "--http2", "-c", "2", "-m", "25", "--rate", "400", "--emit",
                    "none", "-q"], input_text=lines)
    assert r.returncode == 0, r.stderr
    deadline = time.monotonic() + 60
    while True:  # every forked request recorded: answered on both sides, or never sent
        report = json.loads(proxy.get_admin("/hammer/dark/report"))
        recorded = sum(e["pairs"] + e["unsent"] for e in report["endpoints"])
        if recorded >= n or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert recorded == n
    verdict = json.loads(proxy.get_admin("/hammer/dark/verdict"))
    cluster = verdict["clusters"][0]
    assert verdict["verdict"] == "fail"
    assert sorted(d["rule"] for d in cluster["deciding"] if d["scope"] == "overall") == \
        ["diff_rate<1%"]
    diff = next(r for r in cluster["overall"]["rules"] if r["rule"] == "diff_rate<1%")
    assert diff["fields"] == ["GET /json/{id} body.price"]
    assert proxy.metrics()["hammer_dark_http2_requests_total"] == n
    assert primary.stats()["by_protocol"] == {"HTTP/1.1": n, "HTTP/2": 0}


def test_sigterm_drains_http2_streams_in_flight(servers, proxies):
    """A drain sends GOAWAY: the streams already started get their real answers, then the
    connection closes and the proxy exits 0, as for HTTP/1.1 connections."""
    require_program("nghttp", "nghttp2-client")
    regular, dark, proxy = forked(servers, proxies, "--drain-timeout", "20s")
    client = subprocess.Popen(["nghttp", "-n", "-s", "-m", "8", proxy.url("/delay/800")],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        proxy.wait_for_metric("hammer_dark_http2_requests_total", lambda v: v == 8)
        proxy.proc.send_signal(signal.SIGTERM)
        out, _ = client.communicate(timeout=60)
        assert proxy.proc.wait(timeout=30) == 0
    finally:
        if client.poll() is None:
            client.kill()
            client.communicate()
        proxy.stop()
    assert client.returncode == 0, out
    rows = re.findall(r"^\s*(\d+)\s+\+\S+\s+\+\S+\s+\S+\s+200\s+3\s+/delay/800$", out, re.M)
    assert len(set(rows)) == 8, out[-3000:]
    assert "requests 8, responses 8, requests abandoned 0" in proxy.stderr, proxy.stderr


def test_upstream_http2_forwards_streams_and_a_slow_client_holds_the_upstream_back(
        servers, proxies):
    regular, dark, proxy = forked(servers, proxies, "--upstream-http2")
    for version in ("--http1.1", "--http2-prior-knowledge"):
        r = curl(version, "-H", "X-Test: one", proxy.url("/echo?q=2"))
        echo = json.loads(r.stdout)
        assert (echo["method"], echo["path"]) == ("GET", "/echo?q=2"), r.stderr
        assert {k.lower(): v for k, v in echo["headers"].items()}["x-test"] == "one"
    # A large answer to a slow client: read from the upstream only as the client takes it.
    size = 48 << 20
    baseline = memory_kib(proxy.proc.pid, "VmRSS")
    r = curl("--http1.1", "--limit-rate", "16M", proxy.url(f"/bytes/{size}"))
    peak = memory_kib(proxy.proc.pid, "VmHWM")
    assert len(r.stdout) == size, r.stderr
    assert hashlib.sha256(r.stdout).digest() == hashlib.sha256(b"x" * size).digest()
    assert peak - baseline <= 16 * 1024, (baseline, peak)  # a third of the answer at most
    # The upstream saw every request in HTTP/2; the dark cluster stays HTTP/1.1.
    assert regular.stats()["by_protocol"] == {"HTTP/1.1": 0, "HTTP/2": 3}
    proxy.settled_metrics()
    assert dark.stats()["by_protocol"] == {"HTTP/1.1": 3, "HTTP/2": 0}


@pytest.fixture
def dav_store(start_nginx, tmp_path):
    """Starts nginx storing PUT bodies under /files/ (WebDAV) and logging each request's
    protocol, method and status; `http2`: it speaks HTTP/2 with prior knowledge (h2c) only."""
    def start(http2=False):
        name = f"store{len(started)}"
        root = tmp_path / name
        (root / "files").mkdir(parents=True)
        log = tmp_path / f"{name}.log"
        listen = "listen 127.0.0.1:{port} http2;" if http2 else "listen 127.0.0.1:{port};"
        nginx = start_nginx(
            config="user root;\n" + NGINX_BASE.replace("listen 127.0.0.1:{port};", listen),
            http_extra="log_format protocol '$server_protocol $request_method $status';",
            server_extra=f"""
    client_max_body_size 64m;
    access_log {log} protocol;
    location /files/ {{ root {root}; dav_methods PUT; }}
    """)
        nginx.root = root
        nginx.log = log
        started.append(nginx)
        return nginx

    started = []
    return start


def upload_file(tmp_path, size):
    upload = tmp_path / "upload.bin"
    with open(upload, "wb") as f:
        for i in range(size >> 20):
            f.write(i.to_bytes(4, "big") * (1 << 18))
    return upload


def put_all(uploads, timeout=90):
    """Runs one curl per (curl arguments, url) at once; each must answer 201."""
    clients = [subprocess.Popen(["curl", "-sS", "--max-time", "60", "-o", os.devnull, "-w",
                                 "%{http_code}", *args, url],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for args, url in uploads]
    for client in clients:
        out, err = client.communicate(timeout=timeout)
        assert out == b"201", err


def test_upstream_http2_streams_request_bodies_over_the_threshold(proxies, dav_store, tmp_path):
    store = dav_store(http2=True)
    proxy = proxies("--upstream-http2", "--upstream", store.url())
    upload = upload_file(tmp_path, 16 << 20)  # the proxy's cap on a request body (413 above)
    baseline = memory_kib(proxy.proc.pid, "VmRSS")
    # Four at once (64 MiB in all), two with a length (content-length upstream) and two without
    # (DATA until END_STREAM).
    chunked = ["-H", "Transfer-Encoding: chunked"]
    names = [f"{n}.bin" for n in range(4)]
    put_all([(["--http1.1", *(chunked if n % 2 else []), "-T", str(upload)],
              proxy.url(f"/files/{name}")) for n, name in enumerate(names)])
    peak = memory_kib(proxy.proc.pid, "VmHWM")
    expected = hashlib.sha256(upload.read_bytes()).digest()
    for name in names:
        assert hashlib.sha256((store.root / "files" / name).read_bytes()).digest() == expected
    # Passed on as they arrived, never held whole: under a fifth of the bodies.
    assert peak - baseline <= 12 * 1024, (baseline, peak)
    assert proxy.settled_metrics()['hammer_dark_streamed_bodies_total{direction="request"}'] == 4
    # The upstream received them in HTTP/2 (its only protocol on that port).
    assert store.log.read_text().splitlines() == ["HTTP/2.0 PUT 201"] * 4


@pytest.mark.parametrize("upstream_http2", [False, True], ids=["upstream-http1.1", "upstream-h2c"])
def test_http2_clients_stream_request_bodies_over_the_threshold(
        servers, proxies, dav_store, pki, tmp_path, upstream_http2):
    store = dav_store(http2=upstream_http2)
    upstream = ["--upstream-http2"] if upstream_http2 else []
    upload = upload_file(tmp_path, 16 << 20)  # the proxy's cap on a request body (413 above)
    expected = hashlib.sha256(upload.read_bytes()).digest()
    put = ["--data-binary", "@" + str(upload), "-X", "PUT"]
    # Four at once (64 MiB in all) over h2c, then two over TLS (ALPN h2) to a TLS listener.
    h2c_regular, h2c_dark, h2c = forked(servers, proxies, *upstream, upstream=store)
    pki_args = ["--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key)]
    tls_regular, tls_dark, tls = forked(servers, proxies, *pki_args, *upstream, upstream=store)
    tls_client = ["--http2", "--cacert", str(pki.ca), "--resolve",
                  f"localhost:{tls.port}:127.0.0.1"]
    for proxy, client, count, base in (
            (h2c, ["--http2-prior-knowledge"], 4, h2c.url()),
            (tls, tls_client, 2, f"https://localhost:{tls.port}")):
        names = [f"{proxy.port}-{n}.bin" for n in range(count)]
        baseline = memory_kib(proxy.proc.pid, "VmRSS")
        put_all([([*client, *put], f"{base}/files/{name}") for name in names])
        peak = memory_kib(proxy.proc.pid, "VmHWM")
        for name in names:
            stored = (store.root / "files" / name).read_bytes()
            assert hashlib.sha256(stored).digest() == expected, name
        # Passed on as they arrived, never held whole: under a fifth of the bodies.
        assert peak - baseline <= 12 * 1024, (baseline, peak)
        m = proxy.settled_metrics()
        assert m["hammer_dark_http2_requests_total"] == count
        assert m['hammer_dark_streamed_bodies_total{direction="request"}'] == count
    # (A PUT is never copied; test_a_body_over_the_stream_threshold_is_not_copied shows an
    # eligible streamed body is not either.)
    assert h2c_dark.stats()["requests"] == tls_dark.stats()["requests"] == 0
    protocol = "HTTP/2.0" if upstream_http2 else "HTTP/1.1"
    assert store.log.read_text().splitlines() == [f"{protocol} PUT 201"] * 6


class SlowReadingUpstream:
    """Hand-made upstream (no real server reads a request body slowly on demand): takes one
    HTTP/1.1 request with a Content-Length, reads its body 64 KiB at a time with a pause after
    each read (a small receive buffer, so the kernel holds little), and answers 201 with the
    body's SHA-256 in hex."""

    def __init__(self):
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.address = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        self.listener.settimeout(60)
        conn, _ = self.listener.accept()
        with conn:
            conn.settimeout(60)
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, body = data.split(b"\r\n\r\n", 1)
            length = int(re.search(rb"(?im)^content-length:\s*(\d+)", head).group(1))
            digest = hashlib.sha256(body)
            received = len(body)
            while received < length:
                time.sleep(0.02)
                piece = conn.recv(min(65536, length - received))
                if not piece:
                    return
                digest.update(piece)
                received += len(piece)
            answer = digest.hexdigest().encode()
            conn.sendall(b"HTTP/1.1 201 Created\r\nContent-Length: %d\r\n"
                         b"Connection: close\r\n\r\n%s" % (len(answer), answer))

    def stop(self):
        self.listener.close()
        self.thread.join(5)


def test_a_slow_upstream_holds_an_http2_client_at_its_stream_window(proxies, tmp_path):
    slow = SlowReadingUpstream()
    try:
        proxy = proxies("--http2", "--upstream", f"http://{slow.address}")
        upload = upload_file(tmp_path, 8 << 20)
        baseline = memory_kib(proxy.proc.pid, "VmRSS")
        r = curl("--http2-prior-knowledge", "--data-binary", "@" + str(upload), "-X", "PUT",
                 proxy.url("/slow"))
        peak = memory_kib(proxy.proc.pid, "VmHWM")
        assert r.stdout.decode() == hashlib.sha256(upload.read_bytes()).hexdigest(), r.stderr
        # The client waited at its stream window while the upstream read: the proxy never
        # took the body in faster than the upstream did (it would hold 8 MiB then).
        assert peak - baseline <= 4 * 1024, (baseline, peak)
    finally:
        slow.stop()


def test_upstream_http2_to_an_http11_only_upstream_is_a_502(servers, proxies):
    http11_only = servers("--no-http2")
    proxy = proxies("--upstream-http2", "--upstream", f"http://{http11_only.address}")
    r = curl("-o", os.devnull, "-w", "%{response_code}", proxy.url("/"))
    assert r.stdout == b"502", r.stderr
    assert http11_only.stats()["by_protocol"]["HTTP/2"] == 0


def test_upstream_http2_over_tls_negotiates_h2_by_alpn(servers, proxies, pki):
    regular = servers("--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key))
    upstream = f"https://{regular.address}"
    proxy = proxies("--upstream-http2", "--upstream", upstream, "--cacert", str(pki.ca))
    for i in range(3):
        r = curl(proxy.url(f"/echo?i={i}"))
        assert json.loads(r.stdout)["path"] == f"/echo?i={i}", r.stderr
    stats = json.loads(curl("--cacert", str(pki.ca), upstream + "/_hammer/stats").stdout)
    assert stats["by_protocol"]["HTTP/2"] == 3, stats  # ALPN chose h2 (the stats call: HTTP/1.1)


def test_upstream_http2_answers_are_compared_with_the_dark_cluster(servers, proxies):
    primary, secondary = servers(), servers()
    dark = servers("--mutate", "price=0.1")
    proxy = proxies("--upstream-http2", "--upstream", f"http://{primary.address}",
                    "--dark", f"canary=http://{dark.address}", "--regular-instances", "1",
                    "--compare", "--compare-secondary", f"http://{secondary.address}")
    lines = "".join(proxy.url(f"/json/{i % 10}") + "\n" for i in range(300))
    r = run_hammer(["load", "-", "-c", "4", "--emit", "none", "-q"], input_text=lines)
    assert r.returncode == 0
    proxy.settled_metrics()
    endpoint = report_endpoint(proxy, "GET /json/{id}", 300, timeout=30)
    assert endpoint["total"] + endpoint["incomplete"] == 300, endpoint
    assert endpoint["total"] >= 270, endpoint
    assert endpoint["reported_fields"] == ["body.price"]  # the primary's answers parsed whole
    # The secondary is a second regular instance: it speaks what the upstreams speak.
    for side in (primary, secondary):
        assert side.stats()["by_protocol"] == {"HTTP/1.1": 0, "HTTP/2": 300}
    assert dark.stats()["by_protocol"] == {"HTTP/1.1": 300, "HTTP/2": 0}  # no --dark-http2
