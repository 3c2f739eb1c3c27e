"""gRPC through `hammer dark --http2 --upstream-http2` (issue 45, item 2), real grpcio on both
sides: a grpcio client calls the proxy, which forwards to a grpcio server (h2c, and TLS with
ALPN h2 on both hops). What must hold is what the same client sees talking to the server
directly: answers, streamed answers as they are produced, and the status, message and
metadata the server puts in its trailers (`te: trailers` must reach the server, which refuses
a call without it, and the trailing HEADERS frame must reach the client).

Streamed answers (server-sent events over HTTP/1.1) are checked the same way with curl
--no-buffer: each event reaches the client when the upstream sends it, not at the end.
"""
import queue
import socket
import subprocess
import threading
import time
from concurrent import futures

import pytest

from harness import run_hammer
from prerequisites import require_module

SERVICE = "hammer.test.Dark"


class GrpcUpstream:
    """grpcio serving four methods of SERVICE with raw-bytes messages (generic handlers):
    Get (unary: b"item " + request; b"fail" ends the call NOT_FOUND with trailing metadata),
    Tick (server streaming: `n` messages 0.3 s apart for a request b"<n>"), Join (client
    streaming: the requests joined with b"+"), Echo (bidirectional: b"echo " + each request,
    as it comes)."""

    def __init__(self, pki=None):
        import grpc

        def get(request, context):
            if request == b"fail":
                context.set_trailing_metadata(
                    (("x-detail-bin", b"\x00\x01\xfe\xff"), ("x-why", "not in stock")))
                context.abort(grpc.StatusCode.NOT_FOUND, "no such item")
            return b"item " + request

        def tick(request, context):
            for i in range(int(request)):
                if i:
                    time.sleep(0.3)
                yield b"tick %d" % i

        def join(requests, context):
            return b"+".join(requests)

        def echo(requests, context):
            for request in requests:
                yield b"echo " + request

        handler = grpc.method_handlers_generic_handler(SERVICE, {
            "Get": grpc.unary_unary_rpc_method_handler(get),
            "Tick": grpc.unary_stream_rpc_method_handler(tick),
            "Join": grpc.stream_unary_rpc_method_handler(join),
            "Echo": grpc.stream_stream_rpc_method_handler(echo)})
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        self.server.add_generic_rpc_handlers((handler,))
        if pki is None:
            self.port = self.server.add_insecure_port("127.0.0.1:0")
            self.url = f"http://127.0.0.1:{self.port}"
        else:
            credentials = grpc.ssl_server_credentials(
                [(pki.server_key.read_bytes(), pki.server_cert.read_bytes())])
            self.port = self.server.add_secure_port("127.0.0.1:0", credentials)
            self.url = f"https://localhost:{self.port}"
        assert self.port != 0
        self.server.start()

    def stop(self):
        self.server.stop(grace=None)


@pytest.fixture
def grpc_upstream():
    require_module("grpc", "scripts/python-deps.sh (grpcio in tests/integration/requirements.txt)")
    started = []

    def start(pki=None):
        started.append(GrpcUpstream(pki))
        return started[-1]

    yield start
    for upstream in started:
        upstream.stop()


def channel(address, pki=None):
    import grpc

    if pki is None:
        return grpc.insecure_channel(address)
    credentials = grpc.ssl_channel_credentials(root_certificates=pki.ca.read_bytes())
    return grpc.secure_channel(address.replace("127.0.0.1", "localhost"), credentials)


def through_dark(proxies, upstream, pki=None):
    args = ["--http2", "--upstream-http2", "--upstream", upstream.url]
    if pki is not None:
        args += ["--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key),
                 "--cacert", str(pki.ca)]
    return proxies(*args)


def calls_of_every_kind(ch):
    """What a client sees of each kind of call, as comparable values."""
    import grpc

    seen = {"unary": ch.unary_unary(f"/{SERVICE}/Get")(b"x", timeout=10)}
    try:
        ch.unary_unary(f"/{SERVICE}/Get")(b"fail", timeout=10)
        seen["failing"] = "no error"
    except grpc.RpcError as e:
        metadata = {m.key: m.value for m in e.trailing_metadata() or ()
                    if m.key in ("x-detail-bin", "x-why")}
        seen["failing"] = (e.code(), e.details(), metadata)
    seen["server_streaming"] = list(ch.unary_stream(f"/{SERVICE}/Tick")(b"3", timeout=10))
    seen["client_streaming"] = ch.stream_unary(f"/{SERVICE}/Join")(iter([b"a", b"b", b"c"]),
                                                                   timeout=10)
    # Ping-pong: each request is sent only once the answer to the one before has come, so the
    # call hangs (and its deadline fails it) unless both directions flow while it is open.
    requests = queue.Queue()
    call = ch.stream_stream(f"/{SERVICE}/Echo")(iter(requests.get, None), timeout=10)
    answers = []
    for message in (b"1", b"2", b"3"):
        requests.put(message)
        answers.append(next(call))
    requests.put(None)
    seen["bidirectional"] = answers + list(call)
    return seen


@pytest.mark.parametrize("tls", [False, True], ids=["h2c", "tls"])
def test_grpc_calls_through_dark_see_what_direct_calls_see(grpc_upstream, proxies, pki, tls):
    import grpc

    upstream = grpc_upstream(pki if tls else None)
    proxy = through_dark(proxies, upstream, pki if tls else None)
    direct = calls_of_every_kind(channel(f"127.0.0.1:{upstream.port}", pki if tls else None))
    proxied = calls_of_every_kind(channel(proxy.address, pki if tls else None))
    assert direct["unary"] == b"item x"
    assert direct["failing"] == (grpc.StatusCode.NOT_FOUND, "no such item",
                                 {"x-detail-bin": b"\x00\x01\xfe\xff", "x-why": "not in stock"})
    assert direct["server_streaming"] == [b"tick 0", b"tick 1", b"tick 2"]
    assert direct["bidirectional"] == [b"echo 1", b"echo 2", b"echo 3"]
    assert proxied == direct


def test_server_streamed_messages_arrive_as_they_are_sent(grpc_upstream, proxies):
    upstream = grpc_upstream()
    proxy = through_dark(proxies, upstream)
    ch = channel(proxy.address)
    start = time.monotonic()
    arrivals = [time.monotonic() - start
                for _ in ch.unary_stream(f"/{SERVICE}/Tick")(b"5", timeout=20)]
    assert len(arrivals) == 5
    # The upstream sends one every 0.3 s; held whole, all would arrive after 1.2 s together.
    assert arrivals[0] < 0.6, arrivals
    for earlier, later in zip(arrivals, arrivals[1:]):
        assert later - earlier > 0.15, arrivals


class EventStreamUpstream:
    """An HTTP/1.1 server sending a text/event-stream answer, chunked, one event every 0.3 s,
    written on a raw socket so each event leaves in its own chunk at a known time."""

    def __init__(self, events=6):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.events = events
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        self.listener.settimeout(30)
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(30)
            request = b""
            while b"\r\n\r\n" not in request:
                piece = conn.recv(4096)
                if not piece:
                    return
                request += piece
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                         b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n")
            for i in range(self.events):
                if i:
                    time.sleep(0.3)
                event = b"data: event %d\n\n" % i
                conn.sendall(b"%x\r\n%s\r\n" % (len(event), event))
            conn.sendall(b"0\r\n\r\n")

    def stop(self):
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept
        except OSError:
            pass
        self.listener.close()
        self.thread.join(timeout=10)


def test_an_event_stream_reaches_curl_event_by_event(proxies):
    upstream = EventStreamUpstream()
    try:
        proxy = proxies("--upstream", f"http://{upstream.address}")
        start = time.monotonic()
        curl = subprocess.Popen(["curl", "-sS", "--no-buffer", "--max-time", "20",
                                 proxy.url("/events")], stdout=subprocess.PIPE)
        arrivals = []
        for line in curl.stdout:
            if line.startswith(b"data: "):
                arrivals.append((time.monotonic() - start, line.strip()))
        assert curl.wait(timeout=30) == 0
    finally:
        upstream.stop()
    assert [event for _, event in arrivals] == [b"data: event %d" % i for i in range(6)]
    times = [t for t, _ in arrivals]
    # Sent 0.3 s apart over 1.5 s: each arrives in its turn, the first long before the last.
    assert times[-1] - times[0] > 1.2, times
    for earlier, later in zip(times, times[1:]):
        assert later - earlier > 0.15, times


class TrailerUpstream:
    """An HTTP/1.1 server answering every request chunked with `Trailer: X-Checksum` and that
    trailer field after the last chunk (closing after a request that says Connection: close),
    and keeping each request head it received."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.heads = []
        self.conns = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        self.listener.settimeout(30)
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.conns.append(conn)
            with conn:
                conn.settimeout(30)
                buffered = b""
                while True:
                    while b"\r\n\r\n" not in buffered:
                        piece = conn.recv(4096)
                        if not piece:
                            break
                        buffered += piece
                    if b"\r\n\r\n" not in buffered:
                        break
                    head, buffered = buffered.split(b"\r\n\r\n", 1)
                    self.heads.append(head.decode())
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                 b"Trailer: X-Checksum\r\nTransfer-Encoding: chunked\r\n\r\n"
                                 b"5\r\nhello\r\n0\r\nX-Checksum: sha1=abc123\r\n\r\n")
                    if "\r\nconnection: close" in head.decode().lower():
                        break

    def stop(self):
        for conn in self.conns:  # wakes a read on a kept-alive connection
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept
        except OSError:
            pass
        self.listener.close()
        self.thread.join(timeout=10)


def raw_get(address, path, extra=b""):
    """One HTTP/1.1 request on a raw socket; the whole answer as sent (chunked framing and
    trailer section included), read until the proxy's last chunk ends it."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: t\r\n" + extra +
                  b"Connection: close\r\n\r\n")
        answer = b""
        while True:
            piece = s.recv(65536)
            if not piece:
                return answer
            answer += piece


def test_an_http11_trailer_reaches_the_client(proxies):
    upstream = TrailerUpstream()
    try:
        proxy = proxies("--upstream", f"http://{upstream.address}")
        direct = raw_get(upstream.address, "/sum")
        proxied = raw_get(proxy.address, "/sum")
    finally:
        upstream.stop()
    assert direct.endswith(b"0\r\nX-Checksum: sha1=abc123\r\n\r\n")
    head, body = proxied.split(b"\r\n\r\n", 1)
    assert b"\r\nTrailer: X-Checksum" in head, proxied
    assert b"Transfer-Encoding: chunked" in head, proxied
    assert body == b"5\r\nhello\r\n0\r\nX-Checksum: sha1=abc123\r\n\r\n", proxied


def test_an_http2_clients_cookie_crumbs_reach_an_http11_upstream_as_one_line(proxies):
    upstream = TrailerUpstream()
    try:
        proxy = proxies("--http2", "--upstream", f"http://{upstream.address}")
        # nghttp sends each -H as its own field: two cookie fields, as browsers do.
        r = subprocess.run(["nghttp", "-n", "-H", "cookie: a=1", "-H", "cookie: b=2",
                            proxy.url("/c")], capture_output=True, timeout=60)
        assert r.returncode == 0, r.stderr
    finally:
        upstream.stop()
    cookies = [line for head in upstream.heads for line in head.split("\r\n")
               if line.lower().startswith("cookie:")]
    assert cookies == ["Cookie: a=1; b=2"], upstream.heads


def test_grpc_for_an_http11_upstream_fails_unavailable_saying_why(grpc_upstream, proxies):
    import grpc

    upstream = grpc_upstream()
    proxy = proxies("--http2", "--upstream", upstream.url)  # no --upstream-http2
    with pytest.raises(grpc.RpcError) as failed:
        channel(proxy.address).unary_unary(f"/{SERVICE}/Get")(b"x", timeout=10)
    assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "--upstream-http2" in failed.value.details()
    proxy.stop()
    assert "gRPC calls are answered UNAVAILABLE" in proxy.stderr


def test_a_captured_unary_call_replays_as_the_same_grpc_call(grpc_upstream, proxies, tmp_path):
    """--capture keeps a gRPC call's message (binary, base64) and `hammer load --replay` sends
    it again over HTTP/2 as the same call, judged by its grpc-status."""
    import base64
    import json

    upstream = grpc_upstream()
    capture = tmp_path / "grpc.jsonl"
    proxy = proxies("--http2", "--upstream-http2", "--upstream", upstream.url, "--capture",
                    str(capture))
    with channel(proxy.address) as ch:
        assert ch.unary_unary(f"/{SERVICE}/Get")(b"\x00\xffbin", timeout=10) == b"item \x00\xffbin"
    proxy.stop()
    [entry] = [json.loads(line) for line in capture.read_text().splitlines()]
    assert (entry["method"], entry["protocol"], entry["status"]) == ("POST", "HTTP/2", 200)
    assert entry["url"].endswith(f"/{SERVICE}/Get")
    assert entry["body_binary"] is True
    # The message as gRPC frames it: not compressed, 5 bytes long.
    assert base64.b64decode(entry["body"]) == b"\x00\x00\x00\x00\x05\x00\xffbin"
    summary = tmp_path / "summary.json"
    r = run_hammer(["load", "--http2", "--targets-format", "jsonl", "--replay", "--base-url",
                    upstream.url, "--summary-json", str(summary), str(capture)])
    assert r.returncode == 0, r.stderr
    s = json.loads(summary.read_text())
    assert (s["requests"], s["succeeded"]) == (1, 1), r.stderr
    assert s["grpc_statuses"] == {"OK": 1}
