"""Answers that are streams, through `hammer dark` (issue 45, items 1 and 2): what a client sees
must be what the upstream sends, when it sends it.

- An event stream (SSE): each event reaches curl --no-buffer within 50 ms of the upstream
  sending it, and Chromium's EventSource gets them one by one too.
- A 10 GiB answer passes with the proxy's memory flat (RSS sampled while it flows).
- A long poll answered after 60 s is not cut by anything shorter than --upstream-timeout.
- gRPC (grpcio on both sides): a client's cancel reaches the upstream within 100 ms, and an
  upstream's reset reaches the client as fast; a client's deadline (grpc-timeout) ends the call
  upstream too; a slow reader holds the producer back with the proxy's memory bounded; large
  messages and many concurrent calls pass.
"""
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from concurrent import futures
from pathlib import Path

import pytest

import playwright_chromium
from harness import Nginx
from prerequisites import require_module

SERVICE = "hammer.test.Streams"


class TimedEventStream:
    """An HTTP/1.1 server on a raw socket: GET /page answers an HTML page that opens an
    EventSource on /events; GET /events answers text/event-stream, chunked, `events` events
    `gap` s apart, keeping when (time.monotonic) each was written. One connection at a time."""

    PAGE = (b"<!doctype html><title>sse</title><script>"
            b"window.arrivals = [];"
            b"const source = new EventSource('/events');"
            b"source.onmessage = (e) => { window.arrivals.push([e.data, performance.now()]);"
            b"  if (window.arrivals.length === %d) source.close(); };"
            b"</script>")

    def __init__(self, events=10, gap=0.3):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.events, self.gap = events, gap
        self.sent = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        self.listener.settimeout(60)
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(60)
                self._answer(conn)

    def _answer(self, conn):
        request = b""
        while b"\r\n\r\n" not in request:
            piece = conn.recv(4096)
            if not piece:
                return
            request += piece
        if not request.startswith((b"GET /page", b"GET /events")):  # a favicon, say
            conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
                         b"Connection: close\r\n\r\n")
            return
        if request.startswith(b"GET /page"):
            page = self.PAGE % self.events
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n"
                         b"Connection: close\r\n\r\n%s" % (len(page), page))
            return
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n")
        self.sent = []
        for i in range(self.events):
            if i:
                time.sleep(self.gap)
            event = b"data: event %d\n\n" % i
            self.sent.append(time.monotonic())
            conn.sendall(b"%x\r\n%s\r\n" % (len(event), event))
        conn.sendall(b"0\r\n\r\n")

    def stop(self):
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept
        except OSError:
            pass
        self.listener.close()
        self.thread.join(timeout=10)


@pytest.fixture
def event_stream():
    upstream = TimedEventStream()
    yield upstream
    upstream.stop()


def test_each_event_reaches_curl_within_50ms_of_being_sent(event_stream, proxies):
    proxy = proxies("--upstream", f"http://{event_stream.address}")
    curl = subprocess.Popen(["curl", "-sS", "--no-buffer", "--max-time", "30",
                             proxy.url("/events")], stdout=subprocess.PIPE)
    arrivals = [time.monotonic() for line in curl.stdout if line.startswith(b"data: ")]
    assert curl.wait(timeout=30) == 0
    assert len(arrivals) == len(event_stream.sent) == 10
    delays = [arrived - sent for arrived, sent in zip(arrivals, event_stream.sent)]
    assert max(delays) < 0.05, delays


CHROMIUM_SSE = r"""
(async () => {
  const [url, events] = process.argv.slice(2);
  const browser = await launch();
  const page = await browser.newPage();
  await page.goto(url);
  await page.waitForFunction((n) => window.arrivals.length === Number(n), events,
                             {timeout: 30000});
  console.log(JSON.stringify(await page.evaluate(() => window.arrivals)));
  await browser.close();
})().catch((e) => { console.error(e); process.exit(1); });
"""


def test_chromium_event_source_gets_the_events_one_by_one(event_stream, proxies, tmp_path):
    import json

    playwright_chromium.require()
    proxy = proxies("--upstream", f"http://{event_stream.address}")
    out = playwright_chromium.run_script(CHROMIUM_SSE, [proxy.url("/page"), 10], tmp_path)
    arrivals = json.loads(out.strip().splitlines()[-1])
    assert [data for data, _ in arrivals] == [f"event {i}" for i in range(10)]
    # The browser's clock is its own: compare the gaps between events with the upstream's.
    seen = [at / 1000 for _, at in arrivals]
    sent = event_stream.sent
    for i in range(1, 10):
        assert abs((seen[i] - seen[0]) - (sent[i] - sent[0])) < 0.05, (seen, sent)


def test_a_10_gib_answer_passes_with_the_proxys_memory_flat(proxies):
    # Under ThreadSanitizer (`make tsan` sets HAMMER_TSAN) the answer is 1 GiB: every byte takes
    # the same path, and a race shows in the first gigabyte as in the tenth; ten would take
    # five minutes of the suite there.
    size = (1 if os.environ.get("HAMMER_TSAN") else 10) << 30
    # nginx's workers drop root: the file is in a directory they may read (pytest's are 0700).
    shared = Path(tempfile.mkdtemp(prefix="hammer-big-"))
    shared.chmod(0o755)
    big = shared / "big.bin"
    with open(big, "wb") as f:  # sparse: no disk is used
        f.truncate(size)
    big.chmod(0o644)
    nginx = Nginx(server_extra=f"location = /big.bin {{ alias {big}; }}")
    try:
        proxy = proxies("--upstream", f"http://{nginx.address}", "--upstream-timeout", "30s")
        before = proxy.rss_kib()
        curl = subprocess.Popen(["curl", "-sS", "-o", "/dev/null", "-w", "%{size_download}",
                                 "--max-time", "600", proxy.url("/big.bin")],
                                stdout=subprocess.PIPE, text=True)
        peak = before
        while curl.poll() is None:
            peak = max(peak, proxy.rss_kib())
            time.sleep(0.2)
        assert curl.returncode == 0
        assert int(curl.stdout.read()) == size
    finally:
        nginx.stop()
        shutil.rmtree(shared, ignore_errors=True)
    assert peak - before < 64 * 1024, (before, peak)  # KiB


class LongPoll:
    """An HTTP/1.1 server that answers each request `delay` s after it came."""

    def __init__(self, delay):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.delay = delay
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        self.listener.settimeout(120)
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(120)
            while b"\r\n\r\n" not in conn.recv(4096):
                pass
            time.sleep(self.delay)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nnews!\n")

    def stop(self):
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        self.thread.join(timeout=10)


def test_a_long_poll_answered_after_60s_is_not_cut(proxies):
    upstream = LongPoll(60)
    try:
        proxy = proxies("--upstream", f"http://{upstream.address}", "--upstream-timeout", "90s")
        start = time.monotonic()
        r = subprocess.run(["curl", "-sS", "--max-time", "100", proxy.url("/poll")],
                           capture_output=True, timeout=120)
        took = time.monotonic() - start
    finally:
        upstream.stop()
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"news!\n"
    assert 59 < took < 80, took


class GrpcStreams:
    """grpcio serving SERVICE with raw-bytes messages: Watch (server streaming, `n` messages
    of `size` bytes as fast as the client takes them, keeping how many it produced and when
    the call was cancelled), Hang (unary: sleeps until cancelled, keeping when), Reset
    (server streaming: one message, then the call is aborted), Big (unary: echoes the
    request), Small (unary: b"ok"), Count (client streaming: the bytes it received)."""

    def __init__(self):
        import grpc

        self.produced = 0
        self.cancelled_at = None
        self.started = threading.Event()  # a Hang call has reached the upstream
        self.done = threading.Event()

        def note_cancel(context):
            def cancelled():
                self.cancelled_at = time.monotonic()
                self.done.set()
            context.add_callback(cancelled)

        def watch(request, context):
            note_cancel(context)
            n, size = map(int, request.split(b","))
            for i in range(n):
                if not context.is_active():
                    return
                self.produced = i + 1
                yield b"%08d" % i + b"x" * (size - 8)

        def hang(request, context):
            note_cancel(context)
            self.started.set()
            self.done.wait(timeout=30)
            return b"late"

        def reset(request, context):
            yield b"first"
            time.sleep(0.5)
            self.reset_at = time.monotonic()
            context.abort(grpc.StatusCode.INTERNAL, "gone")

        options = [("grpc.max_receive_message_length", 64 << 20),
                   ("grpc.max_send_message_length", 64 << 20)]
        handler = grpc.method_handlers_generic_handler(SERVICE, {
            "Watch": grpc.unary_stream_rpc_method_handler(watch),
            "Hang": grpc.unary_unary_rpc_method_handler(hang),
            "Reset": grpc.unary_stream_rpc_method_handler(reset),
            "Big": grpc.unary_unary_rpc_method_handler(lambda request, context: request),
            "Small": grpc.unary_unary_rpc_method_handler(lambda request, context: b"ok"),
            "Count": grpc.stream_unary_rpc_method_handler(
                lambda requests, context: b"%d" % sum(len(r) for r in requests))})
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=64), options=options)
        self.server.add_generic_rpc_handlers((handler,))
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.url = f"http://127.0.0.1:{self.port}"
        self.server.start()

    def stop(self):
        self.done.set()
        self.server.stop(grace=None)


@pytest.fixture
def grpc_streams(proxies):
    require_module("grpc", "scripts/python-deps.sh (grpcio in tests/integration/requirements.txt)")
    upstream = GrpcStreams()
    proxy = proxies("--http2", "--upstream-http2", "--upstream", upstream.url)
    yield upstream, proxy
    upstream.stop()


def channel(proxy):
    import grpc

    return grpc.insecure_channel(proxy.address, options=[
        ("grpc.max_receive_message_length", 64 << 20),
        ("grpc.max_send_message_length", 64 << 20)])


def test_a_clients_cancel_reaches_the_upstream_within_100ms(grpc_streams):
    upstream, proxy = grpc_streams
    call = channel(proxy).unary_unary(f"/{SERVICE}/Hang").future(b"", timeout=30)
    assert upstream.started.wait(timeout=10), "the call never reached the upstream"
    cancelled = time.monotonic()
    call.cancel()
    assert upstream.done.wait(timeout=10), "the upstream never saw the cancel"
    assert upstream.cancelled_at - cancelled < 0.1, upstream.cancelled_at - cancelled


def test_an_upstreams_reset_reaches_the_client_within_100ms(grpc_streams):
    import grpc

    upstream, proxy = grpc_streams
    call = channel(proxy).unary_stream(f"/{SERVICE}/Reset")(b"", timeout=30)
    assert next(call) == b"first"
    with pytest.raises(grpc.RpcError) as failed:
        next(call)
    seen = time.monotonic()
    assert failed.value.code() == grpc.StatusCode.INTERNAL
    assert seen - upstream.reset_at < 0.1, seen - upstream.reset_at


def test_a_clients_deadline_ends_the_call_upstream(grpc_streams):
    import grpc

    upstream, proxy = grpc_streams
    start = time.monotonic()
    with pytest.raises(grpc.RpcError) as failed:
        channel(proxy).unary_unary(f"/{SERVICE}/Hang")(b"", timeout=0.5)
    assert failed.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert upstream.done.wait(timeout=10), "the upstream call outlived the client's deadline"
    assert upstream.cancelled_at - start < 0.5 + 0.1, upstream.cancelled_at - start


def test_a_slow_reader_holds_the_producer_back_with_memory_bounded(grpc_streams):
    upstream, proxy = grpc_streams
    before = proxy.rss_kib()
    call = channel(proxy).unary_stream(f"/{SERVICE}/Watch")(b"400,1048576", timeout=120)
    peak = before
    for i, message in enumerate(call):
        assert message.startswith(b"%08d" % i)
        if i == 20:
            # 21 MiB taken; the producer may be ahead by the windows between (HTTP/2 flow
            # control: grpcio's, the proxy's 256 KiB per stream, the sockets), not by 400.
            assert upstream.produced < 21 + 60, upstream.produced
        if i % 10 == 0:
            peak = max(peak, proxy.rss_kib())
        time.sleep(0.005)
    assert upstream.produced == 400
    assert peak - before < 64 * 1024, (before, peak)  # KiB


def test_large_messages_and_many_concurrent_calls_pass(grpc_streams):
    upstream, proxy = grpc_streams
    ch = channel(proxy)
    big = bytes(range(256)) * (12 << 12)  # 12 MiB, under --max-request-body-bytes (16 MiB)
    assert ch.unary_unary(f"/{SERVICE}/Big")(big, timeout=60) == big
    small = ch.unary_unary(f"/{SERVICE}/Small")
    calls = [small.future(b"", timeout=60) for _ in range(500)]
    assert [c.result() for c in calls] == [b"ok"] * 500


def test_a_client_stream_longer_than_the_body_cap_passes(grpc_streams):
    """A gRPC call's body is a stream of messages, not an upload: 24 MiB sent in 1 MiB messages
    pass although --max-request-body-bytes is 16 MiB (memory is the stream's window)."""
    upstream, proxy = grpc_streams
    count = channel(proxy).stream_unary(f"/{SERVICE}/Count")
    assert count(iter([b"m" * (1 << 20)] * 24), timeout=60) == b"%d" % (24 << 20)


class EarlyHints:
    """An HTTP/1.1 server answering each request with 103 Early Hints (a Link field and a
    hop-by-hop one that must not pass), then 200 after 0.3 s."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        self.listener.settimeout(60)
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(60)
                request = b""
                while b"\r\n\r\n" not in request:
                    piece = conn.recv(4096)
                    if not piece:
                        break
                    request += piece
                conn.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n"
                             b"Keep-Alive: timeout=5\r\n\r\n")
                time.sleep(0.3)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n"
                             b"\r\nok\n")

    def stop(self):
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        self.thread.join(timeout=10)


def test_early_hints_reach_http11_and_http2_clients_before_the_answer(proxies):
    upstream = EarlyHints()
    try:
        proxy = proxies("--http2", "--upstream", f"http://{upstream.address}")
        http11 = subprocess.run(["curl", "-sS", "-v", "--http1.1", proxy.url("/page")],
                                capture_output=True, text=True, timeout=30)
        http2 = subprocess.run(["nghttp", "-v", proxy.url("/page")], capture_output=True,
                               text=True, timeout=30)
    finally:
        upstream.stop()
    assert http11.returncode == 0, http11.stderr
    assert http11.stdout == "ok\n"
    lines = http11.stderr.splitlines()
    early = lines.index("< HTTP/1.1 103 Early Hints")
    final = lines.index("< HTTP/1.1 200 OK")
    assert early < final, lines
    assert "< Link: </style.css>; rel=preload" in lines[early:final], lines
    assert not any(line.lower().startswith("< keep-alive") for line in lines[early:final])
    assert http2.returncode == 0, http2.stderr
    statuses = [line.split()[-1] for line in http2.stdout.splitlines()
                if ") :status: " in line]
    assert statuses == ["103", "200"], http2.stdout
    assert "link: </style.css>; rel=preload" in http2.stdout
