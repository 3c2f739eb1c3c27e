"""`hammer serve` answers HTTP/2 (issue 15): h2c with prior knowledge on cleartext, ALPN h2 with
--tls-cert, on the same routes as HTTP/1.1 and under the same limits. Real clients only: curl
(--http2-prior-knowledge, --http2), nghttp, h2load, hammer load --http2, and h2spec, the HTTP/2
conformance suite (h2_support.py). One test writes frames by hand (named below) for the one
fault no client sends: a head that never completes.

What the server received and refused is read from its /_hammer/stats (requests by protocol,
rejections by reason), so the counts are checked on the server's side.
"""
import json
import os
import re
import socket
import subprocess
import time

import pytest

from h2_support import H2_PREFACE, frame, h2spec_run
from harness import HammerServe, run_hammer, started_until_teardown, wait_for
from prerequisites import require_program
from tls_pki import make_pki

@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def serve():
    yield from started_until_teardown(HammerServe)


def curl(*args):
    return subprocess.run(["curl", "-sS", "--max-time", "20", *args], capture_output=True,
                          text=True, timeout=60)


def tls_stats(server, pki):
    r = curl("--cacert", str(pki.ca), "--resolve", f"localhost:{server.port}:127.0.0.1",
             f"https://localhost:{server.port}/_hammer/stats")
    return json.loads(r.stdout)


def protocols(server, pki=None):
    stats = server.stats() if pki is None else tls_stats(server, pki)
    return stats["by_protocol"]


def rejected(server):
    return server.stats()["server"]["rejected"]


def test_curl_h2c_prior_knowledge_on_the_same_routes(serve):
    server = serve()
    r = curl("--http2-prior-knowledge", "-w", "\n%{http_version} %{response_code}",
             "-H", "X-Test: one", "--data-binary", "payload", server.url("/echo?q=1"))
    assert r.returncode == 0, r.stderr
    body, trailer = r.stdout.rsplit("\n", 1)
    assert trailer == "2 200"
    echo = json.loads(body)
    assert echo["method"] == "POST" and echo["path"] == "/echo?q=1"
    assert echo["body"] == "payload"
    assert echo["headers"]["x-test"] == "one"
    assert echo["headers"]["host"] == server.address  # :authority becomes Host
    r = curl("--http2-prior-knowledge", "-w", "%{http_version} %{response_code}", "-o",
             os.devnull, server.url("/status/404"))
    assert r.stdout == "2 404"
    # The same port still speaks HTTP/1.1 to an HTTP/1.1 client.
    r = curl("--http1.1", "-w", "%{http_version}", "-o", os.devnull, server.url("/"))
    assert r.stdout == "1.1"
    assert protocols(server) == {"HTTP/1.1": 1, "HTTP/2": 2}


def test_curl_alpn_h2_over_tls(serve, pki):
    server = serve("--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key))
    url = f"https://localhost:{server.port}/bytes/100000"
    resolve = ["--cacert", str(pki.ca), "--resolve", f"localhost:{server.port}:127.0.0.1"]
    r = curl("--http2", *resolve, "-w", "%{http_version} %{size_download}", "-o", os.devnull, url)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "2 100000"
    r = curl("--http1.1", *resolve, "-w", "%{http_version}", "-o", os.devnull, url)
    assert r.stdout == "1.1"


def test_no_http2_flag_keeps_http11_only(serve):
    server = serve("--no-http2")
    r = curl("--http2-prior-knowledge", "-o", os.devnull, server.url("/"))
    assert r.returncode != 0  # the preface is a bad request to an HTTP/1.1-only server
    r = curl("--http1.1", "-w", "%{http_version}", "-o", os.devnull, server.url("/"))
    assert r.stdout == "1.1"
    assert protocols(server)["HTTP/2"] == 0


def test_nghttp_many_streams_on_one_connection(serve):
    require_program("nghttp", "nghttp2-client")
    server = serve()
    r = subprocess.run(["nghttp", "-n", "-s", "-m", "20", server.url("/delay/5")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    # nghttp's statistics: one line per stream (id, times, status, size, path)
    rows = re.findall(r"^\s*(\d+)\s+\+\S+\s+\+\S+\s+\S+\s+200\s+3\s+/delay/5$", r.stdout, re.M)
    assert len(set(rows)) == 20, r.stdout[-3000:]
    assert protocols(server)["HTTP/2"] == 20


def test_the_stream_limit_is_announced_in_settings(serve):
    require_program("nghttp", "nghttp2-client")
    server = serve("--max-concurrent-streams", "7")
    r = subprocess.run(["nghttp", "-n", "-v", server.url("/")], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    received = r.stdout.split("recv SETTINGS frame", 1)[1].split("send SETTINGS frame", 1)[0]
    assert "[SETTINGS_MAX_CONCURRENT_STREAMS(0x03):7]" in received, r.stdout[:3000]
    assert "[SETTINGS_MAX_HEADER_LIST_SIZE(0x06):65536]" in received, r.stdout[:3000]


def test_h2load_exact_counts_h2c_and_tls(serve, pki):
    require_program("h2load", "nghttp2-client")
    server = serve()
    r = subprocess.run(["h2load", "-n", "2000", "-c", "4", "-m", "10", server.url("/")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert re.search(r"requests: 2000 total, 2000 started, 2000 done, 2000 succeeded, 0 failed",
                     r.stdout), r.stdout
    assert "status codes: 2000 2xx" in r.stdout
    assert protocols(server) == {"HTTP/1.1": 0, "HTTP/2": 2000}

    tls = serve("--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key))
    r = subprocess.run(["h2load", "-n", "500", "-c", "2", "-m", "8",
                        f"https://127.0.0.1:{tls.port}/"], capture_output=True, text=True,
                       timeout=120)
    assert "Application protocol: h2" in r.stdout, r.stdout
    assert "500 succeeded, 0 failed" in r.stdout
    assert protocols(tls, pki) == {"HTTP/1.1": 0, "HTTP/2": 500}


def test_hammer_load_http2_against_hammer_serve(serve, tmp_path):
    server = serve()
    summary = tmp_path / "s.json"
    urls = server.url("/") + "\n" + server.url("/status/503") + "\n"
    r = run_hammer(["load", "--http2", "-c", "2", "-m", "16", "--loop", "-n", "400", "-t", "1",
                    "--summary-json", str(summary)], input_text=urls)
    s = json.loads(summary.read_text())
    assert (s["succeeded"], s["failed"]) == (200, 200), r.stderr
    assert s["failures"] == {"http_5xx": 200}
    assert protocols(server) == {"HTTP/1.1": 0, "HTTP/2": 400}
    # two for the load, one for each of the two stats requests
    assert server.stats()["server"]["connections_accepted"] == 2 + 2


def test_oversized_body_is_answered_413_and_counted(serve, tmp_path):
    server = serve()
    big = tmp_path / "big"
    big.write_bytes(b"x" * (16 * 1024 * 1024 + 1))  # the server's body cap is 16 MiB
    r = curl("--http2-prior-knowledge", "-w", "%{http_version} %{response_code}", "-o",
             os.devnull, "--data-binary", f"@{big}", server.url("/echo"))
    assert r.stdout == "2 413", r.stderr
    assert rejected(server)["body_too_large"] == 1
    # The connection's other streams and the server go on.
    r = curl("--http2-prior-knowledge", "-w", "%{response_code}", "-o", os.devnull, server.url("/"))
    assert r.stdout == "200"


def test_head_that_never_completes_is_closed_at_the_head_deadline(serve):
    server = serve("--header-timeout", "1s")
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as s:
        s.sendall(H2_PREFACE + frame(0x4, 0, 0))  # the preface and an empty SETTINGS
        # HEADERS (END_HEADERS) announcing 64 bytes of block, of which 4 come.
        s.sendall(frame(0x1, 0x4, 1, length=64) + b"\x82\x86\x84\x41")
        got = b""
        started = time.monotonic()
        while time.monotonic() - started < 15:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    # Hand-made: no client library sends a head and then stops in the middle of it.
    # SETTINGS (and its ACK) first, then GOAWAY (type 7) before the close.
    assert b"\x07\x00\x00\x00\x00\x00" in got, got
    stats = wait_for(lambda: rejected(server)["header_timeout"] == 1 and server.stats(),
                     what="header_timeout counted")
    assert stats["server"]["connections_open"] == 1  # only the stats request's own


def test_h2spec_h2c(serve, tmp_path):
    server = serve()
    r, cases, passed, not_passed = h2spec_run(server.port, tmp_path)
    print(f"h2spec h2c: {passed} of {cases} passed")
    assert cases >= 145, r.stdout[-2000:]
    assert not_passed == [], not_passed


def test_h2spec_tls(serve, pki, tmp_path):
    server = serve("--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key))
    r, cases, passed, not_passed = h2spec_run(server.port, tmp_path, "-t", "-k")
    print(f"h2spec TLS: {passed} of {cases} passed")
    assert cases >= 145, r.stdout[-2000:]
    assert not_passed == [], not_passed
