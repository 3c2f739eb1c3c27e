"""Bodies above --stream-threshold pass through `hammer dark` as they arrive, with back-pressure,
through the real binary to a real nginx: 20 concurrent 15 MiB uploads (nginx's WebDAV PUT
stores them; their checksums are compared) and 20 concurrent 60 MB downloads read slowly
(nginx serves a file) keep the proxy's peak memory within 64 MiB of its baseline (before
streaming, the issue measured 932 MiB and 1.39 GB). Uploads are not copied to the dark cluster
and are counted as skipped; a client or an upstream that goes away mid-body is counted.

Memory is read from /proc/PID/status (VmHWM, the peak, against VmRSS after start): these are
bounds on memory, not on time. Deadlines below are hang guards."""
import hashlib
import http.client
import random
import socket
import threading

import pytest

from dark_support import DarkProxy
from harness import NGINX_BASE, HammerServe, memory_kib

MIB = 1 << 20
RSS_ALLOWANCE_KIB = 64 * 1024
CLIENTS = 20
UPLOAD_BYTES = 15 * MIB
DOWNLOAD_BYTES = 60 * 1000 * 1000
PIECE = 256 * 1024


def pieces(seed, total):
    """The upload body of one client, produced piece by piece (never held whole here either)."""
    rng = random.Random(seed)
    sent = 0
    while sent < total:
        n = min(PIECE, total - sent)
        yield rng.randbytes(n)
        sent += n


def sha256_of(seed, total):
    digest = hashlib.sha256()
    for piece in pieces(seed, total):
        digest.update(piece)
    return digest.hexdigest()


def run_all(target, count, timeout=240):
    errors = []

    def guarded(i):
        try:
            target(i)
        except Exception as e:  # reported below, with the client's number
            errors.append(f"client {i}: {e!r}")

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
        assert not t.is_alive(), "a client hung"
    assert not errors, errors


@pytest.fixture
def store(start_nginx, tmp_path):
    """nginx storing PUT bodies under /files/ (WebDAV) and serving a 60 MB file at /big."""
    root = tmp_path / "root"
    (root / "files").mkdir(parents=True)
    big = tmp_path / "big.bin"
    rng = random.Random(60)
    with open(big, "wb") as f:
        for _ in range(DOWNLOAD_BYTES // 1_000_000):
            f.write(rng.randbytes(1_000_000))
    # The worker writes the bodies under pytest's private tmp_path: as the test's own user
    # (nginx ignores `user` unless started as root, and then it is root).
    nginx = start_nginx(config="user root;\n" + NGINX_BASE, server_extra=f"""
    client_max_body_size 64m;
    location /files/ {{ root {root}; dav_methods PUT; }}
    location = /big {{ alias {big}; default_type application/octet-stream; }}
    """)
    nginx.root = root
    nginx.big_sha256 = hashlib.sha256(big.read_bytes()).hexdigest()
    return nginx


@pytest.fixture
def proxies():
    started = []

    def start(*args):
        proxy = DarkProxy(*args)
        started.append(proxy)
        return proxy

    yield start
    for proxy in started:
        proxy.stop()


def test_20_concurrent_15_mib_uploads_arrive_intact_in_bounded_memory(store, proxies):
    dark = HammerServe("--threads", "1")
    try:
        proxy = proxies("--upstream", f"http://{store.address}", "--dark",
                        f"canary=http://{dark.address}", "--allow", "/files/.*")
        baseline = memory_kib(proxy.proc.pid, "VmRSS")

        def upload(i):
            conn = http.client.HTTPConnection(proxy.host, proxy.port, timeout=120)
            conn.request("PUT", f"/files/{i}.bin", body=pieces(i, UPLOAD_BYTES),
                         headers={"Content-Length": str(UPLOAD_BYTES)})
            response = conn.getresponse()
            response.read()
            conn.close()
            assert response.status in (201, 204), response.status

        run_all(upload, CLIENTS)
        peak = memory_kib(proxy.proc.pid, "VmHWM")
        for i in range(CLIENTS):
            stored = (store.root / "files" / f"{i}.bin").read_bytes()
            assert len(stored) == UPLOAD_BYTES, i
            assert hashlib.sha256(stored).hexdigest() == sha256_of(i, UPLOAD_BYTES), i
        assert peak - baseline <= RSS_ALLOWANCE_KIB, (baseline, peak)
        metrics = proxy.settled_metrics()
        assert metrics['hammer_dark_streamed_bodies_total{direction="request"}'] == CLIENTS
        # Not copied: the body was never held. Counted as the strategy's copies, skipped.
        assert metrics['hammer_dark_eligible_total{cluster="canary"}'] == CLIENTS
        assert metrics['hammer_dark_skipped_streamed_total{cluster="canary"}'] == CLIENTS
        assert metrics['hammer_dark_sent_total{cluster="canary"}'] == 0
        assert dark.stats()["requests"] == 0
        assert metrics["hammer_dark_buffered_bytes"] == 0  # every window given back
    finally:
        dark.stop()


def test_the_request_body_cap_is_the_users_and_holds_for_streamed_bodies(store, proxies):
    """--max-request-body-bytes (default 16 MiB, nginx's client_max_body_size) caps streamed
    bodies too: over it, a content-length is answered 413 before any of the body is read;
    raised, a 40 MiB upload streams through intact."""
    size = 40 * MIB
    default = proxies("--upstream", f"http://{store.address}")
    conn = http.client.HTTPConnection(default.host, default.port, timeout=60)
    conn.putrequest("PUT", "/files/refused.bin")
    conn.putheader("Content-Length", str(size))
    conn.endheaders()  # the head only: the answer must not wait for the body
    response = conn.getresponse()
    response.read()
    conn.close()
    assert response.status == 413
    assert default.metrics()['hammer_dark_rejected_total{reason="body_too_large"}'] == 1
    assert not (store.root / "files" / "refused.bin").exists()

    raised = proxies("--upstream", f"http://{store.address}", "--max-request-body-bytes", "48MiB")
    conn = http.client.HTTPConnection(raised.host, raised.port, timeout=120)
    conn.request("PUT", "/files/big.bin", body=pieces(7, size),
                 headers={"Content-Length": str(size)})
    response = conn.getresponse()
    response.read()
    conn.close()
    assert response.status in (201, 204), response.status
    stored = (store.root / "files" / "big.bin").read_bytes()
    assert len(stored) == size
    assert hashlib.sha256(stored).hexdigest() == sha256_of(7, size)
    assert raised.settled_metrics()['hammer_dark_streamed_bodies_total{direction="request"}'] == 1


def slow_get(proxy, path, chunk=64 * 1024):
    """GET through the proxy on a raw socket, reading small pieces with a pause between them;
    returns (status line, body bytes read, sha256 of the body)."""
    sock = socket.create_connection((proxy.host, proxy.port), timeout=120)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        data = sock.recv(4096)
        assert data, "closed before the head"
        head += data
    head, body = head.split(b"\r\n\r\n", 1)
    digest = hashlib.sha256(body)
    received = len(body)
    stop = threading.Event()
    while True:
        data = sock.recv(chunk)
        if not data:
            break
        digest.update(data)
        received += len(data)
        stop.wait(0.001)  # a slow reader: the proxy must wait for it, not buffer for it
    sock.close()
    return head.split(b"\r\n", 1)[0].decode(), received, digest.hexdigest()


def test_20_concurrent_60_mb_downloads_read_slowly_stay_in_bounded_memory(store, proxies):
    proxy = proxies("--upstream", f"http://{store.address}")
    baseline = memory_kib(proxy.proc.pid, "VmRSS")

    def download(i):
        status, received, digest = slow_get(proxy, "/big")
        assert status == "HTTP/1.1 200 OK", status
        assert received == DOWNLOAD_BYTES
        assert digest == store.big_sha256

    run_all(download, CLIENTS)
    peak = memory_kib(proxy.proc.pid, "VmHWM")
    assert peak - baseline <= RSS_ALLOWANCE_KIB, (baseline, peak)
    metrics = proxy.settled_metrics()
    assert metrics['hammer_dark_streamed_bodies_total{direction="response"}'] == CLIENTS
    assert metrics["hammer_dark_responses_total"] == CLIENTS
    assert metrics["hammer_dark_buffered_bytes"] == 0


def test_a_client_leaving_mid_download_aborts_the_upstream_request_and_is_counted(
        store, proxies):
    proxy = proxies("--upstream", f"http://{store.address}")
    sock = socket.create_connection((proxy.host, proxy.port), timeout=30)
    sock.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
    assert sock.recv(4096).startswith(b"HTTP/1.1 200 ")
    sock.close()  # with most of the 60 MB unread
    proxy.wait_for_metric('hammer_dark_stream_aborted_total{by="client"}', lambda v: v == 1)
    metrics = proxy.settled_metrics()
    assert metrics['hammer_dark_stream_aborted_total{by="upstream"}'] == 0
    assert metrics["hammer_dark_buffered_bytes"] == 0


def test_a_client_leaving_mid_upload_aborts_the_upstream_request_and_is_counted(
        store, proxies):
    proxy = proxies("--upstream", f"http://{store.address}")
    sock = socket.create_connection((proxy.host, proxy.port), timeout=30)
    sock.sendall(f"PUT /files/half.bin HTTP/1.1\r\nHost: x\r\n"
                 f"Content-Length: {UPLOAD_BYTES}\r\n\r\n".encode())
    for piece in pieces(7, UPLOAD_BYTES // 2):
        sock.sendall(piece)
    sock.close()
    proxy.wait_for_metric('hammer_dark_stream_aborted_total{by="client"}', lambda v: v == 1)
    assert proxy.settled_metrics()["hammer_dark_buffered_bytes"] == 0
    assert not (store.root / "files" / "half.bin").exists()  # nginx never got a whole body


def test_an_upstream_reset_mid_response_closes_the_client_connection_and_is_counted(proxies):
    # hammer serve's /fault/reset-mid-body declares 1000 bytes and resets after a few; with a
    # threshold below that, the response is streamed and its head is out before the reset.
    upstream = HammerServe("--threads", "1")
    try:
        proxy = proxies("--upstream", f"http://{upstream.address}", "--stream-threshold", "100")
        sock = socket.create_connection((proxy.host, proxy.port), timeout=30)
        sock.sendall(b"GET /fault/reset-mid-body HTTP/1.1\r\nHost: x\r\n\r\n")
        received = b""
        while True:
            try:
                data = sock.recv(65536)
            except ConnectionResetError:
                break
            if not data:
                break
            received += data
        sock.close()
        head, _, body = received.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 ")
        assert b"Content-Length: 1000" in head
        assert len(body) < 1000  # cut short: the close says what a 502 no longer could
        proxy.wait_for_metric('hammer_dark_stream_aborted_total{by="upstream"}', lambda v: v == 1)
        metrics = proxy.settled_metrics()
        assert metrics['hammer_dark_upstream_failures_total{type="reset"}'] == 1
    finally:
        upstream.stop()
