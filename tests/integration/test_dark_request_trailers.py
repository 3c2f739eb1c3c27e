"""Request trailers through `hammer dark` (issue 45, item 5: trailers both ways).

A client's trailer fields follow its body to the upstream, translated when the two sides speak
different HTTP versions: an HTTP/1.1 chunked request's trailer section, and an HTTP/2 request's
trailing HEADERS frame (sent by nghttp's --trailer), reach an HTTP/1.1 upstream as the trailer
section of a chunked body and an HTTP/2 upstream as a trailing HEADERS frame. Fields that frame
or route a message (Content-Length, Host, Transfer-Encoding) or that the proxy asserts
(X-Forwarded-For) are never passed on in a trailer.

Upstreams: RawRecorder (raw_recorder.py: the exact bytes, read strictly) for HTTP/1.1, and for
HTTP/2 a server built on python-hyper's `h2`, the HTTP/2 protocol stack behind httpx and
hypercorn, which reports the trailers it receives. Everything stays on loopback.
"""
import socket
import subprocess
import threading

import pytest

from prerequisites import require_module
from raw_recorder import RawRecorder, strict_requests

BODY = b"hello"


class H2TrailerUpstream:
    """An HTTP/2 server (h2c, prior knowledge) on python-hyper's h2 that answers every request
    200 "ok" once its stream ends and keeps, per request, its body and trailer fields."""

    def __init__(self):
        require_module("h2", "scripts/python-deps.sh (h2 in tests/integration/requirements.txt)")
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.requests = []  # dicts: headers, body, trailers ([(name, value)] as str)
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
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _connection(self, conn):
        import h2.config
        import h2.connection
        import h2.events

        h2conn = h2.connection.H2Connection(
            config=h2.config.H2Configuration(client_side=False, header_encoding="latin-1"))
        h2conn.initiate_connection()
        open_streams = {}
        conn.settimeout(30)
        with conn:
            try:
                conn.sendall(h2conn.data_to_send())
            except OSError:  # the proxy went away, or stop() shut the connection
                return
            while True:
                try:
                    data = conn.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                for event in h2conn.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        open_streams[event.stream_id] = {
                            "headers": list(event.headers), "body": b"", "trailers": []}
                    elif isinstance(event, h2.events.DataReceived):
                        open_streams[event.stream_id]["body"] += event.data
                        h2conn.acknowledge_received_data(event.flow_controlled_length,
                                                         event.stream_id)
                    elif isinstance(event, h2.events.TrailersReceived):
                        open_streams[event.stream_id]["trailers"] = list(event.headers)
                    elif isinstance(event, h2.events.StreamEnded):
                        self.requests.append(open_streams.pop(event.stream_id))
                        h2conn.send_headers(event.stream_id, [(":status", "200"),
                                                              ("content-length", "2")])
                        h2conn.send_data(event.stream_id, b"ok", end_stream=True)
                try:
                    conn.sendall(h2conn.data_to_send())
                except OSError:
                    return

    def stop(self):
        for conn in self.conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        self.thread.join(timeout=10)


@pytest.fixture
def recorder():
    r = RawRecorder()
    yield r
    r.stop()


@pytest.fixture
def h2_upstream():
    upstream = H2TrailerUpstream()
    yield upstream
    upstream.stop()


def forwarded_requests(recorder):
    requests, rest = strict_requests(b"".join(recorder.connections()))
    assert rest == b""
    return requests


def nghttp_post(tmp_path, url, *trailers):
    body = tmp_path / "body"
    body.write_bytes(BODY)
    args = ["nghttp", "-n", "-d", str(body)]
    for t in trailers:
        args += ["--trailer", t]
    return subprocess.run(args + [url], capture_output=True, timeout=60)


def test_an_http11_request_trailer_reaches_an_http11_upstream(proxies, recorder):
    proxy = proxies("--upstream", recorder.url())
    host, port = proxy.address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(b"POST /sum HTTP/1.1\r\nHost: t\r\nTrailer: X-Checksum\r\n"
                  b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                  b"5\r\nhello\r\n0\r\nX-Checksum: sha1=abc123\r\n"
                  b"X-Forwarded-For: 6.6.6.6\r\nContent-Length: 99\r\n\r\n")
        answer = b""
        while piece := s.recv(65536):
            answer += piece
    assert answer.startswith(b"HTTP/1.1 200"), answer
    [request] = forwarded_requests(recorder)
    assert request.values("transfer-encoding") == [b"chunked"]
    assert request.value("trailer") == "X-Checksum"
    assert request.body == BODY
    assert request.trailers == [(b"X-Checksum", b"sha1=abc123")]
    # The proxy's own X-Forwarded-For is in the head; the client's trailer one went nowhere.
    assert request.value("x-forwarded-for") == "127.0.0.1"


def test_an_http2_request_trailer_reaches_an_http11_upstream(proxies, recorder, tmp_path):
    proxy = proxies("--http2", "--upstream", recorder.url())
    r = nghttp_post(tmp_path, proxy.url("/sum"), "x-checksum: sha1=abc123", "host: evil.example")
    assert r.returncode == 0, r.stderr
    [request] = forwarded_requests(recorder)
    assert request.body == BODY
    assert request.trailers == [(b"x-checksum", b"sha1=abc123")]
    assert request.value("host") != "evil.example"


def test_an_http2_request_trailer_reaches_an_http2_upstream(proxies, h2_upstream, tmp_path):
    proxy = proxies("--http2", "--upstream-http2", "--upstream", f"http://{h2_upstream.address}")
    r = nghttp_post(tmp_path, proxy.url("/sum"), "x-checksum: sha1=abc123",
                    "x-forwarded-for: 6.6.6.6")
    assert r.returncode == 0, r.stderr
    [request] = h2_upstream.requests
    assert request["body"] == BODY
    assert request["trailers"] == [("x-checksum", "sha1=abc123")]


def test_an_http11_request_trailer_reaches_an_http2_upstream(proxies, h2_upstream):
    proxy = proxies("--upstream-http2", "--upstream", f"http://{h2_upstream.address}")
    host, port = proxy.address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(b"POST /sum HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n"
                  b"Connection: close\r\n\r\n5\r\nhello\r\n0\r\nX-Checksum: sha1=abc123\r\n\r\n")
        answer = b""
        while piece := s.recv(65536):
            answer += piece
    assert answer.startswith(b"HTTP/1.1 200"), answer
    [request] = h2_upstream.requests
    assert request["body"] == BODY
    assert request["trailers"] == [("x-checksum", "sha1=abc123")]


def test_a_trailer_section_larger_than_a_head_is_refused_431(proxies, recorder):
    proxy = proxies("--upstream", recorder.url())
    host, port = proxy.address.rsplit(":", 1)
    trailers = b"".join(b"X-T%d: %s\r\n" % (i, b"v" * 1000) for i in range(80))  # 80 KB
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(b"POST /sum HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                  b"5\r\nhello\r\n0\r\n" + trailers + b"\r\n")
        answer = b""
        while piece := s.recv(65536):
            answer += piece
    assert answer.startswith(b"HTTP/1.1 431"), answer
    assert forwarded_requests(recorder) == []
