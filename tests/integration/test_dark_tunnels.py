"""Upgrade tunnels through `hammer dark` (issue 45, item 4): a WebSocket client (python
`websockets`) talks through the proxy to a `websockets` server exactly as it would directly:
the handshake's 101 with its Upgrade fields, text and binary messages both ways, messages the
server sends unasked, and the close handshake from either side. Tunnels go to the regular
upstream only (a dark cluster behind the same proxy receives nothing), are counted in /metrics,
and are closed after --tunnel-idle-timeout without traffic.
"""
import json
import os
import threading
import time

import pytest

from prerequisites import require_module


class EchoServer:
    """A websockets server on loopback: echoes each message with "echo: " (bytes as they are),
    answers "push" with three messages of its own, and "bye" by closing the connection
    (code 4000). Keeps the close code each connection ended with."""

    def __init__(self):
        from websockets.sync.server import serve

        self.closes = []

        def handler(ws):
            try:
                for message in ws:
                    if message == "push":
                        for i in range(3):
                            ws.send(f"pushed {i}")
                    elif message == "bye":
                        ws.close(4000, "server says bye")
                    elif isinstance(message, bytes):
                        ws.send(message)
                    else:
                        ws.send("echo: " + message)
            finally:
                self.closes.append(ws.close_code)

        self.server = serve(handler, "127.0.0.1", 0)
        self.port = self.server.socket.getsockname()[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.thread.join(timeout=10)


@pytest.fixture
def echo_server():
    require_module("websockets",
                   "scripts/python-deps.sh (websockets in tests/integration/requirements.txt)")
    server = EchoServer()
    yield server
    server.stop()


def conversation(url):
    """What a client sees of one conversation, as comparable values."""
    from websockets.sync.client import connect

    seen = {}
    with connect(url, open_timeout=10, close_timeout=10) as ws:
        seen["subprotocol_header"] = ws.response.headers.get("Upgrade", "").lower()
        ws.send("hello")
        seen["echo"] = ws.recv(timeout=10)
        blob = os.urandom(256_000)  # binary, and random: permessage-deflate cannot shrink it
        ws.send(blob)
        seen["binary_intact"] = ws.recv(timeout=10) == blob
        ws.send("push")
        seen["pushed"] = [ws.recv(timeout=10) for _ in range(3)]
        ws.send("bye")
        try:
            ws.recv(timeout=10)
            seen["closed_by_server"] = None
        except Exception:  # ConnectionClosed: the server's close frame came through
            seen["closed_by_server"] = (ws.close_code, ws.close_reason)
    return seen


def wait_until(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_a_websocket_conversation_through_dark_is_the_direct_one(echo_server, proxies, servers):
    dark = servers()
    proxy = proxies("--upstream", f"http://127.0.0.1:{echo_server.port}",
                    "--dark", f"canary=http://{dark.address}", "--regular-instances", "1")
    direct = conversation(f"ws://127.0.0.1:{echo_server.port}/chat")
    proxied = conversation(f"ws://{proxy.address}/chat")
    assert direct == {"subprotocol_header": "websocket", "echo": "echo: hello",
                      "binary_intact": True, "pushed": ["pushed 0", "pushed 1", "pushed 2"],
                      "closed_by_server": (4000, "server says bye")}
    assert proxied == direct
    assert wait_until(lambda: proxy.metrics()["hammer_dark_tunnels_open"] == 0)
    m = proxy.metrics()
    assert m["hammer_dark_tunnels_total"] == 1
    assert m['hammer_dark_tunnel_bytes_total{direction="to_upstream"}'] > 256_000
    assert m['hammer_dark_tunnel_bytes_total{direction="to_client"}'] > 256_000
    assert dark.stats()["requests"] == 0  # never forked


def test_a_client_close_reaches_the_server(echo_server, proxies):
    from websockets.sync.client import connect

    proxy = proxies("--upstream", f"http://127.0.0.1:{echo_server.port}")
    with connect(f"ws://{proxy.address}/", open_timeout=10, close_timeout=10) as ws:
        ws.send("x")
        assert ws.recv(timeout=10) == "echo: x"
        ws.close(4001, "client leaves")
    assert wait_until(lambda: 4001 in echo_server.closes), echo_server.closes
    assert wait_until(lambda: proxy.metrics()["hammer_dark_tunnels_open"] == 0)


def test_an_idle_tunnel_is_closed_after_its_timeout(echo_server, proxies):
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    proxy = proxies("--upstream", f"http://127.0.0.1:{echo_server.port}",
                    "--tunnel-idle-timeout", "1s")
    with connect(f"ws://{proxy.address}/", open_timeout=10, close_timeout=2) as ws:
        ws.send("x")
        assert ws.recv(timeout=10) == "echo: x"
        start = time.monotonic()
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=20)
        idle = time.monotonic() - start
    assert 0.9 <= idle <= 5, idle  # the proxy closed it, not the 20 s wait


def test_an_upgrade_the_upstream_refuses_is_an_ordinary_answer(servers, proxies):
    import http.client

    upstream = servers()  # hammer serve does not speak WebSocket: it answers as HTTP
    proxy = proxies("--upstream", f"http://{upstream.address}")
    conn = http.client.HTTPConnection(proxy.host, proxy.port, timeout=10)
    conn.request("GET", "/status/426", headers={
        "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="})
    r = conn.getresponse()
    assert r.status == 426
    assert r.read().startswith(b"426")  # hammer serve's own body, whole
    conn.close()
    assert proxy.metrics()["hammer_dark_tunnels_total"] == 0


def test_bytes_after_an_upgrade_the_upstream_refuses_never_reach_it(servers, proxies):
    """Upgrade smuggling: a request hidden behind an upgrade's head, in the same packet, would
    reach the upstream unseen by the proxy if the tunnel opened before the upstream said 101."""
    import socket

    upstream = servers()
    proxy = proxies("--upstream", f"http://{upstream.address}")
    with socket.create_connection((proxy.host, proxy.port), timeout=10) as s:
        s.sendall(b"GET /status/200 HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\n"
                  b"Connection: Upgrade\r\n\r\n"
                  b"GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n")
        answer = b""
        while True:
            piece = s.recv(65536)
            if not piece:
                break
            answer += piece
    assert answer.startswith(b"HTTP/1.1 200"), answer
    assert answer.count(b"HTTP/1.1 ") == 1, answer  # one answer, then the connection closed
    stats = upstream.stats()
    assert stats["requests"] == 1, stats
    assert "/smuggled" not in json.dumps(stats), stats
