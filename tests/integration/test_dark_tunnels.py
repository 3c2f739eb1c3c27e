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

    def __init__(self, process_request=None):
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

        self.server = serve(handler, "127.0.0.1", 0, process_request=process_request)
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


PAGE = """<!doctype html><title>ws</title><script>
window.conversation = (async () => {
  const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') +
                           location.host + '/chat');
  ws.binaryType = 'arraybuffer';
  const next = () => new Promise((resolve, reject) => {
    ws.onmessage = (e) => resolve(e.data);
    ws.onclose = (e) => reject(new Error('closed ' + e.code));
  });
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
  ws.send('hello');
  const echo = await next();
  ws.send(new Uint8Array([0, 1, 2, 255]).buffer);
  const binary = Array.from(new Uint8Array(await next()));
  ws.send('push');
  const pushed = [await next(), await next(), await next()];
  const closed = new Promise((resolve) => { ws.onclose = (e) => resolve(e.code); });
  ws.close(1000);
  return {echo, binary, pushed, code: await closed};
})();
</script>"""

CHROMIUM_WS = r"""
(async () => {
  const [url] = process.argv.slice(2);
  const browser = await launch();
  const context = await browser.newContext({ignoreHTTPSErrors: true});
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForLoadState('networkidle');
  const result = await page.evaluate(() => window.conversation);
  console.log(JSON.stringify(result));
  await browser.close();
})().catch((e) => { console.error(e); process.exit(1); });
"""


def page_or_handshake(connection, request):
    """process_request of a websockets server: GET /page (not a WebSocket handshake) answers
    PAGE, any other plain request 404 (a browser's favicon); handshakes go on."""
    if request.headers.get("Upgrade", "").lower() == "websocket":
        return None
    if request.path != "/page":
        return connection.respond(404, "")
    response = connection.respond(200, PAGE)
    del response.headers["Content-Type"]  # a multi-dict: assigning would add a second one
    response.headers["Content-Type"] = "text/html"
    return response


@pytest.mark.parametrize("over", ["http1", "http2"])
def test_chromiums_websocket_through_dark(proxies, pki, tmp_path, over):
    """Chromium's own WebSocket, on a page served through dark: over HTTP/1.1 with Upgrade, and
    over HTTP/2 with the extended CONNECT of RFC 8441 on the page's own connection (Chromium
    uses it when the server announces SETTINGS_ENABLE_CONNECT_PROTOCOL), tunnelled to an
    HTTP/1.1 WebSocket server."""
    import playwright_chromium

    require_module("websockets",
                   "scripts/python-deps.sh (websockets in tests/integration/requirements.txt)")
    playwright_chromium.require()
    upstream = EchoServer(process_request=page_or_handshake)
    try:
        args = ["--upstream", f"http://127.0.0.1:{upstream.port}"]
        if over == "http2":
            args += ["--http2", "--tls-cert", str(pki.server_cert), "--tls-key",
                     str(pki.server_key)]
        proxy = proxies(*args)
        scheme = "https" if over == "http2" else "http"
        page = f"{scheme}://localhost:{proxy.port}/page"
        out = playwright_chromium.run_script(CHROMIUM_WS, [page], tmp_path)
    finally:
        upstream.stop()
    result = json.loads(out.strip().splitlines()[-1])
    assert result["echo"] == "echo: hello"
    assert result["binary"] == [0, 1, 2, 255]
    assert result["pushed"] == ["pushed 0", "pushed 1", "pushed 2"]
    assert result["code"] == 1000
    metrics = proxy.metrics()
    assert metrics["hammer_dark_tunnels_total"] == 1
    # Over HTTP/2 every request, the WebSocket's extended CONNECT included, came on HTTP/2: a
    # browser that fell back to a WebSocket over HTTP/1.1 would leave one request uncounted.
    http2 = metrics["hammer_dark_requests_total"] if over == "http2" else 0
    assert metrics["hammer_dark_http2_requests_total"] == http2, metrics
