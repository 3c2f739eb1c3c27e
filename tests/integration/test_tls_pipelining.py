"""Pipelined requests over TLS, through `hammer serve` and `hammer dark` with TLS listeners.

The client (Python's ssl module over memory BIOs) encrypts each request as its own TLS record
and sends them all in one sendall, so they reach the server together: OpenSSL reads ahead and
returns one record per SSL_read, so most of them sit in the server's SSL object while the
socket is empty, and no epoll event will announce them. Every request must still be answered.
"""
import socket
import ssl

import pytest

from dark_support import DarkProxy
from harness import HammerServe
from tls_pki import make_pki

REQUESTS = 300


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


class CoalescingTlsClient:
    """A TLS client whose writes are encrypted into memory and sent when asked, all at once."""

    def __init__(self, address, ca):
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        context = ssl.create_default_context(cafile=str(ca))
        self.tls = context.wrap_bio(self.incoming, self.outgoing, server_hostname="localhost")
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.send()
                assert self._receive(), "the server did not complete the handshake"
        self.send()

    def queue(self, data):
        self.tls.write(data)  # one record (each piece here is far below 16 KiB)

    def send(self):
        data = self.outgoing.read()
        if data:
            self.sock.sendall(data)

    def _receive(self):
        """False when the server closed the connection or sent nothing for 10 s."""
        try:
            chunk = self.sock.recv(65536)
        except TimeoutError:
            return False
        self.incoming.write(chunk)
        return bool(chunk)

    def read_responses(self, count):
        """The bodies of the next `count` responses (Content-Length framed); fewer when the
        server closes or goes silent first."""
        data = b""
        bodies = []
        while len(bodies) < count:
            head_end = data.find(b"\r\n\r\n")
            if head_end >= 0:
                head = data[:head_end].decode()
                length = next(int(line.split(":", 1)[1]) for line in head.split("\r\n")
                              if line.lower().startswith("content-length:"))
                if len(data) >= head_end + 4 + length:
                    assert head.startswith("HTTP/1.1 200"), head
                    bodies.append(data[head_end + 4:head_end + 4 + length])
                    data = data[head_end + 4 + length:]
                    continue
            try:
                data += self.tls.read(65536)
            except ssl.SSLWantReadError:
                if not self._receive():
                    break
        return bodies

    def close(self):
        self.sock.close()


def pipeline(address, ca):
    client = CoalescingTlsClient(address, ca)
    try:
        for i in range(REQUESTS):
            client.queue(f"GET /echo?n={i} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
        client.send()
        return client.read_responses(REQUESTS)
    finally:
        client.close()


def test_serve_answers_every_pipelined_request_held_by_tls(pki):
    server = HammerServe("--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key))
    try:
        bodies = pipeline(server.address, pki.ca)
    finally:
        server.stop()
    assert len(bodies) == REQUESTS
    assert [f"/echo?n={i}" in body.decode() for i, body in enumerate(bodies)] == [True] * REQUESTS


def test_dark_answers_every_pipelined_request_held_by_tls(pki):
    upstream = HammerServe()
    proxy = DarkProxy("--upstream", upstream.url(), "--tls-cert", str(pki.server_cert),
                      "--tls-key", str(pki.server_key))
    try:
        bodies = pipeline(proxy.address, pki.ca)
    finally:
        proxy.stop()
        upstream.stop()
    assert len(bodies) == REQUESTS
    assert [f"/echo?n={i}" in body.decode() for i, body in enumerate(bodies)] == [True] * REQUESTS
