#!/usr/bin/env python3
"""hammer dark against nginx on the protocols production speaks: gRPC, WebSocket, time to first
byte (issue 45, item 8), side by side in one run.

Everything on 127.0.0.1. With 2+ CPUs the proxies under test (each `hammer dark --threads 1`,
and one nginx worker holding every nginx proxy) are pinned to the last CPU; the upstreams, the
clients and the nginx serving files to the TTFB rows to the first (taskset).

- gRPC unary, CPU per call. The upstream is a real grpcio server (grpc.aio, h2c), method
  /bench.Catalog/GetItem answering a fixed 200-byte protobuf message to a 64-byte request. The
  client is grpcio too (grpc.aio, one channel, --grpc-concurrency calls in flight, a fixed
  --grpc-calls per run; every answer is checked byte for byte). Targets:
    nginx grpc_pass          `listen ... http2` + `grpc_pass` to an upstream block with keepalive
    nginx grpc_pass+mirror   the same, every call also mirrored (`mirror`, the subrequest's
                             `grpc_pass` to the canary, `rewrite ^ $request_uri break`)
    dark                     `hammer dark --http2 --upstream-http2`
    dark forking             the same plus a dark cluster (`--dark canary=... --dark-http2
                             canary --dark-grpc-methods '/bench.Catalog/Get*'`, multiplier 1):
                             every call is copied to a second grpcio server and compared
  CPU = utime+stime of the proxy process (/proc/PID/stat; the nginx worker for nginx) over the
  run, divided by the calls answered. The canary counts the calls it gets (reported: copies
  are not guaranteed, by either proxy). Goal: dark <= 1.0x nginx, forking off and
  on.
- WebSocket echo tunnel throughput. The upstream is a python `websockets` echo server
  (compression off); the client opens --ws-connections connections and on each sends
  --ws-messages binary messages of --ws-size bytes while reading the echoes. nginx uses the
  recipe of its own documentation (proxy_http_version 1.1, Upgrade and Connection set);
  hammer dark tunnels the Upgrade. Throughput = payload bytes echoed / wall time of the
  transfer; proxy CPU per MiB. Goal: dark >= 1.0x nginx throughput.
- TTFB. A client on keep-alive HTTP/1.1 sends --ttfb-requests sequential GETs and times each
  from the request written to the first byte of the answer read (then reads the whole answer).
  Upstream: an nginx worker serving a 3-byte answer and a 512 KiB file, and a python server
  that sends the first 16 KiB of a 32 KiB answer at once and the rest --drip-gap-ms later (an
  answer that streams). Targets: direct, through `hammer dark`, through nginx `proxy_pass`
  (reference). Overhead = median TTFB through the proxy minus direct within a round. Goal: dark
  within 1 ms of direct.

Rounds run every target once, the order rotated each round; ratios and differences are formed
within a round, and the median (min-max) over rounds reported.

Python: the standard library plus grpcio and websockets (tests/integration/requirements.txt,
installed by scripts/python-deps.sh); when python3 lacks them the script re-runs itself with
the interpreter scripts/python-env.sh names. Runtime at the defaults: about 3 minutes.

Usage: bench/dark_protocols.py [--rounds 5] [--grpc-calls 4000] [--grpc-concurrency 16]
         [--ws-connections 4] [--ws-messages 800] [--ws-size 65536] [--ttfb-requests 300]
         [--drip-gap-ms 20] [--only grpc,ws,ttfb] [--no-pin]
"""
# bench-timeout: 600
from __future__ import annotations

import argparse
import asyncio
import atexit
import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (NGINX_HTTP_HEAD, REPO, Nginx, Pinning, RunInfo,  # noqa: E402
                      default_build_dir, default_hammer, env_int, http_get, median,
                      proc_cpu_seconds, read_line, snapshot_hammer, span, start,
                      start_hammer, write_results)

SERVICE = "bench.Catalog"
METHOD = f"/{SERVICE}/GetItem"


def _varint(n: int) -> bytes:
    out = b""
    while True:
        low, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([low])
        out += bytes([low | 0x80])


def _field(number: int, data: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(len(data)) + data


# A request of 64 bytes and an answer of 200 (field 1 a name, field 2 a nested message, field 3
# padding): protobuf wire format, so dark's comparison decodes them field by field.
REQUEST = _field(1, b"item-0042") + _field(2, b"x" * (64 - 11 - 2))
REPLY = (_field(1, b"item-0042") + _field(2, _field(1, b"1999") + _field(2, b"EUR")) +
         _field(3, b"p" * (200 - 11 - 13 - 3)))
assert len(REQUEST) == 64 and len(REPLY) == 200, (len(REQUEST), len(REPLY))


# ---------------------------------------------------------------------------------------------
# Roles: the servers and clients, each a process of this script (pinned, measured apart).


def role_grpc_server() -> None:
    """A grpcio server of SERVICE: GetItem answers REPLY, Count the GetItem calls so far."""
    import grpc

    async def main():
        calls = 0

        async def get_item(request, context):
            nonlocal calls
            calls += 1
            return REPLY

        async def count(request, context):
            return str(calls).encode()

        handler = grpc.method_handlers_generic_handler(SERVICE, {
            "GetItem": grpc.unary_unary_rpc_method_handler(get_item),
            "Count": grpc.unary_unary_rpc_method_handler(count)})
        server = grpc.aio.server()
        server.add_generic_rpc_handlers((handler,))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        print(port, flush=True)
        await server.wait_for_termination()

    asyncio.run(main())


def role_grpc_client(target: str, calls: int, concurrency: int, canary: str) -> None:
    """CALLS unary GetItem calls to TARGET, CONCURRENCY in flight on one channel; prints
    {"ok", "failed", "seconds", "codes", "canary"} (canary: the GetItem calls the server at
    CANARY got during the run, once settled; -1 without one)."""
    import grpc

    async def canary_count() -> int:
        """The canary's GetItem calls so far, on a channel of its own (tried three times)."""
        for attempt in range(3):
            try:
                async with grpc.aio.insecure_channel(canary) as ch:
                    return int(await ch.unary_unary(f"/{SERVICE}/Count")(b"", timeout=10))
            except grpc.aio.AioRpcError:
                if attempt == 2:
                    raise
                await asyncio.sleep(0.2)
        return -1

    async def settled_count(before: int) -> int:
        """The canary's count once it stopped moving (copies are sent after the answer)."""
        last, stable_since = await canary_count(), time.monotonic()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            await asyncio.sleep(0.1)
            now = await canary_count()
            if now != last:
                last, stable_since = now, time.monotonic()
            elif now - before >= calls or time.monotonic() - stable_since > 1:
                break
        return last

    async def main():
        before = await canary_count() if canary else 0
        ok = failed = issued = 0
        codes: dict[str, int] = {}
        async with grpc.aio.insecure_channel(target) as ch:
            call = ch.unary_unary(METHOD)

            async def worker():
                nonlocal ok, failed, issued
                while issued < calls:
                    issued += 1
                    try:
                        answer = await call(REQUEST, timeout=10)
                        if answer == REPLY:
                            ok += 1
                        else:
                            failed += 1
                            codes["wrong answer"] = codes.get("wrong answer", 0) + 1
                    except grpc.aio.AioRpcError as e:
                        failed += 1
                        key = f"{e.code().name}: {e.details()}"[:160]
                        codes[key] = codes.get(key, 0) + 1

            t0 = time.monotonic()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            seconds = time.monotonic() - t0
        seen = -1
        if canary:
            seen = await settled_count(before) - before
        print(json.dumps({"ok": ok, "failed": failed, "seconds": seconds, "codes": codes,
                          "canary": seen}), flush=True)

    asyncio.run(main())


def role_ws_server() -> None:
    """A websockets echo server (compression off, no message size limit)."""
    from websockets.asyncio.server import serve

    async def echo(ws):
        async for message in ws:
            await ws.send(message)

    async def main():
        async with serve(echo, "127.0.0.1", 0, compression=None, max_size=None) as server:
            print(server.sockets[0].getsockname()[1], flush=True)
            await server.serve_forever()

    asyncio.run(main())


def role_ws_client(url: str, connections: int, messages: int, size: int) -> None:
    """CONNECTIONS websockets connections to URL, each sending MESSAGES binary messages of SIZE
    bytes while reading the echoes; prints {"bytes", "seconds", "ok"} (bytes echoed intact)."""
    from websockets.asyncio.client import connect

    payload = os.urandom(size)

    async def one(ws) -> int:
        async def send():
            for _ in range(messages):
                await ws.send(payload)

        async def receive() -> int:
            got = 0
            for _ in range(messages):
                got += len(payload) if await ws.recv() == payload else 0
            return got

        _, got = await asyncio.gather(send(), receive())
        return got

    async def main():
        sockets = [await connect(url, compression=None, max_size=None, open_timeout=10)
                   for _ in range(connections)]
        t0 = time.monotonic()
        got = await asyncio.gather(*(one(ws) for ws in sockets))
        seconds = time.monotonic() - t0
        for ws in sockets:
            await ws.close()
        total = sum(got)
        print(json.dumps({"bytes": total, "seconds": seconds,
                          "ok": total == connections * messages * size}), flush=True)

    asyncio.run(main())


def role_drip_server(gap_ms: float) -> None:
    """HTTP/1.1 keep-alive server: every request is answered 200 with a 32 KiB body, its first
    16 KiB written with the header, the rest GAP_MS later: an answer that streams."""
    half = b"d" * 16384
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 32768\r\nContent-Type: text/plain\r\n\r\n"

    def serve(conn: socket.socket) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                _, buf = buf.split(b"\r\n\r\n", 1)  # GET: no body
                conn.sendall(head + half)
                time.sleep(gap_ms / 1000)
                conn.sendall(half)

    listener = socket.create_server(("127.0.0.1", 0), backlog=128)
    print(listener.getsockname()[1], flush=True)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


# ---------------------------------------------------------------------------------------------
# nginx: the proxies under test (last CPU), and the files of the TTFB rows (first CPU).

NGINX_PROXY_CONF = NGINX_HTTP_HEAD + """\
  http2_max_concurrent_streams 256;
  upstream grpc_up {{ server 127.0.0.1:{grpc_up}; keepalive 64; keepalive_requests 1000000; }}
  upstream grpc_canary {{ server 127.0.0.1:{grpc_canary}; keepalive 64;
                          keepalive_requests 1000000; }}
  upstream ws_up {{ server 127.0.0.1:{ws_up}; }}
  upstream files_up {{ server 127.0.0.1:{files_up}; keepalive 64; keepalive_requests 1000000; }}
  upstream drip_up {{ server 127.0.0.1:{drip_up}; keepalive 64; keepalive_requests 1000000; }}
  server {{
    listen 127.0.0.1:{probe} backlog=4096;
    location / {{ return 200 "ok\\n"; }}
  }}
  server {{
    listen 127.0.0.1:{grpc} http2 backlog=4096;
    location / {{ grpc_pass grpc://grpc_up; }}
  }}
  server {{
    listen 127.0.0.1:{grpc_mirror} http2 backlog=4096;
    # A call's stream stays open in nginx until its mirror ends: at 256 (the limit above)
    # nginx resets new calls with REFUSED_STREAM.
    http2_max_concurrent_streams 4096;
    location / {{
      mirror /__mirror;
      grpc_pass grpc://grpc_up;
    }}
    location = /__mirror {{
      internal;
      rewrite ^ $request_uri break;
      grpc_pass grpc://grpc_canary;
    }}
  }}
  server {{
    listen 127.0.0.1:{ws} backlog=4096;
    location / {{
      proxy_pass http://ws_up;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection "upgrade";
      proxy_read_timeout 1h;
    }}
  }}
  server {{
    listen 127.0.0.1:{files} backlog=4096;
    location / {{
      proxy_pass http://files_up;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }}
  }}
  server {{
    listen 127.0.0.1:{drip} backlog=4096;
    location / {{
      proxy_pass http://drip_up;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }}
  }}
}}
"""

NGINX_FILES_CONF = NGINX_HTTP_HEAD + """\
  server {{
    listen 127.0.0.1:{port} backlog=4096;
    location = / {{ return 200 "ok\\n"; }}
    location = /small {{ return 200 "ok\\n"; }}
    location / {{ root {root}; }}
  }}
}}
"""


# ---------------------------------------------------------------------------------------------
# The runs.


class Bench:
    def __init__(self, args, tmp: str, pins: Pinning):
        self.args = args
        self.tmp = tmp
        self.near = pins.first()
        self.far = pins.last()
        self.me = [sys.executable, os.path.abspath(__file__)]
        self.log = open(os.path.join(args.out, "processes.log"), "w")

    def role(self, *argv: str) -> int:
        """Starts a server role of this script on the first CPU; returns its port."""
        p = start(self.near + self.me + ["--role", *argv], stdout=subprocess.PIPE,
                  stderr=self.log, stdin=subprocess.DEVNULL, text=True)
        line = read_line(p, timeout=30)
        if not line.isdigit():
            sys.exit(f"role {argv[0]} did not start (see {self.log.name})")
        return int(line)

    def run_role(self, *argv: str, timeout: float = 300) -> dict:
        """Runs a client role of this script on the first CPU to its end; its JSON line."""
        r = subprocess.run(self.near + self.me + ["--role", *argv], capture_output=True,
                           text=True, timeout=timeout)
        if r.returncode != 0 or not r.stdout.strip():
            raise RuntimeError(f"role {argv[0]} failed ({r.returncode}): {r.stderr[-1500:]}")
        return json.loads(r.stdout.strip().splitlines()[-1])

    def dark(self, *extra: str, admin: bool = False) -> tuple[int, str, str]:
        """`hammer dark --threads 1` on the last CPU: (pid, address, admin address or '')."""
        argv = self.far + [self.args.hammer_copy, "dark", "--listen", "127.0.0.1:0",
                           "--threads", "1", *extra]
        if admin:
            argv += ["--admin", "127.0.0.1:0"]
        p, lines = start_hammer(argv, lines=2 if admin else 1, stderr=self.log)
        return p.pid, lines[0], lines[1] if admin else ""


def rotated(items: list, rnd: int) -> list:
    k = rnd % len(items)
    return items[k:] + items[:k]


def dark_counter(admin: str, name: str) -> float:
    """A counter of dark's /metrics (summed over its labels matching NAME exactly)."""
    host, port = admin.rsplit(":", 1)
    status, body = http_get(int(port), "/metrics", timeout=5)
    if status != 200:
        raise RuntimeError(f"admin /metrics answered {status}")
    total = 0.0
    for line in body.decode().splitlines():
        m = re.match(r"([a-zA-Z_:]+)(\{[^}]*\})? ([-+0-9.eE]+)$", line)
        if m and (m.group(1) + (m.group(2) or "")) == name:
            total += float(m.group(3))
    return total


def bench_grpc(b: Bench, nginx: Nginx, rounds: int, notes: list[str]) -> list[dict]:
    a = b.args
    up, canary = b.upstreams["grpc_up"], b.upstreams["grpc_canary"]
    fork_flags = ["--dark", f"canary=http://127.0.0.1:{canary}", "--dark-http2", "canary",
                  "--regular-instances", "1", "--dark-multiplier", "canary=1",
                  "--dark-grpc-methods", f"/{SERVICE}/Get*"]
    dark_pid, dark_addr, _ = b.dark("--http2", "--upstream-http2", "--upstream",
                                    f"http://127.0.0.1:{up}")
    fork_pid, fork_addr, fork_admin = b.dark("--http2", "--upstream-http2", "--upstream",
                                             f"http://127.0.0.1:{up}", *fork_flags, admin=True)
    # (name, pid, address, canary address when the target copies every call)
    targets = [
        ("nginx grpc_pass", nginx.worker, f"127.0.0.1:{nginx.ports['grpc']}", ""),
        ("nginx grpc_pass+mirror", nginx.worker, f"127.0.0.1:{nginx.ports['grpc_mirror']}",
         f"127.0.0.1:{canary}"),
        ("dark", dark_pid, dark_addr, ""),
        ("dark forking", fork_pid, fork_addr, f"127.0.0.1:{canary}"),
    ]
    # nginx's mirror must really reach the canary with the method's path; dropped if not.
    for name, _pid, address, copy_to in targets:
        r = b.run_role("grpc-client", address, "200", str(a.grpc_concurrency), copy_to)
        if r["failed"] or (copy_to and r["canary"] <= 0):
            print(f"  {name}: warm-up failed {r}", file=sys.stderr)
            if name == "nginx grpc_pass+mirror":
                targets = [t for t in targets if t[0] != name]
                notes.append(f"nginx grpc_pass+mirror dropped: its warm-up gave {r}")
            else:
                sys.exit(f"gRPC through {name} fails: {r}")
    runs = []
    for rnd in range(rounds):
        for name, pid, address, copy_to in rotated(targets, rnd):
            sent_before = dark_counter(fork_admin, 'hammer_dark_sent_total{cluster="canary"}') \
                if name == "dark forking" else 0
            before = proc_cpu_seconds(pid)
            r = b.run_role("grpc-client", address, str(a.grpc_calls),
                           str(a.grpc_concurrency), copy_to)
            cpu = proc_cpu_seconds(pid) - before
            if r["failed"] or r["ok"] != a.grpc_calls:
                sys.exit(f"gRPC through {name}: {r}")
            run = {"part": "grpc", "round": rnd, "target": name, "ok": r["ok"],
                   "seconds": r["seconds"], "cpu": cpu, "canary": r["canary"]}
            if name == "dark forking":
                run["dark_sent"] = dark_counter(
                    fork_admin, 'hammer_dark_sent_total{cluster="canary"}') - sent_before
            runs.append(run)
            print(f"  grpc round {rnd + 1}/{rounds} {name:<24} {r['ok'] / r['seconds']:7.0f} "
                  f"calls/s {1e6 * cpu / r['ok']:6.1f} us CPU/call", file=sys.stderr)
    return runs


def bench_ws(b: Bench, nginx: Nginx, rounds: int) -> list[dict]:
    a = b.args
    up = b.upstreams["ws_up"]
    dark_pid, dark_addr, _ = b.dark("--upstream", f"http://127.0.0.1:{up}")
    targets = [("nginx Upgrade", nginx.worker, f"ws://127.0.0.1:{nginx.ports['ws']}/echo"),
               ("dark", dark_pid, f"ws://{dark_addr}/echo")]
    for name, _pid, url in targets:  # warm-up, and a check that both tunnel intact
        r = b.run_role("ws-client", url, "1", "10", str(a.ws_size))
        if not r["ok"]:
            sys.exit(f"WebSocket through {name} fails: {r}")
    runs = []
    for rnd in range(rounds):
        for name, pid, url in rotated(targets, rnd):
            before = proc_cpu_seconds(pid)
            r = b.run_role("ws-client", url, str(a.ws_connections), str(a.ws_messages),
                           str(a.ws_size))
            cpu = proc_cpu_seconds(pid) - before
            if not r["ok"]:
                sys.exit(f"WebSocket through {name}: {r}")
            mib = r["bytes"] / 2**20
            runs.append({"part": "ws", "round": rnd, "target": name, "bytes": r["bytes"],
                         "seconds": r["seconds"], "cpu": cpu})
            print(f"  ws round {rnd + 1}/{rounds} {name:<14} {mib / r['seconds']:7.1f} MiB/s "
                  f"{1e3 * cpu / mib:6.2f} ms CPU/MiB", file=sys.stderr)
    return runs


def ttfb_run(address: str, path: str, requests: int) -> list[float]:
    """REQUESTS sequential GETs of PATH on one keep-alive connection: each one's seconds from
    the request written to the first answer byte read. Raises on a non-200 answer."""
    host, port = address.rsplit(":", 1)
    request = f"GET {path} HTTP/1.1\r\nHost: {address}\r\n\r\n".encode()
    out = []
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(requests):
            t0 = time.perf_counter()
            s.sendall(request)
            data = s.recv(65536)
            out.append(time.perf_counter() - t0)
            while b"\r\n\r\n" not in data:
                more = s.recv(65536)
                if not more:
                    raise RuntimeError(f"{address}{path}: closed in the header")
                data += more
            head, body = data.split(b"\r\n\r\n", 1)
            if not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(f"{address}{path}: {head[:200]!r}")
            m = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
            if not m:
                raise RuntimeError(f"{address}{path}: no Content-Length in {head[:400]!r}")
            left = int(m.group(1)) - len(body)
            while left > 0:
                more = s.recv(min(left, 1 << 20))
                if not more:
                    raise RuntimeError(f"{address}{path}: closed in the body")
                left -= len(more)
    return out


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def bench_ttfb(b: Bench, nginx: Nginx, files: Nginx, rounds: int) -> list[dict]:
    a = b.args
    drip = b.upstreams["drip_up"]
    if b.near:  # the client is this process: on the first CPU, away from the proxies
        os.sched_setaffinity(0, {int(b.near[-1])})
    files_addr = f"127.0.0.1:{files.port}"
    _, dark_files, _ = b.dark("--upstream", f"http://{files_addr}")
    _, dark_drip, _ = b.dark("--upstream", f"http://127.0.0.1:{drip}")
    answers = [  # (answer, path, direct, through dark, through nginx)
        ("3 B", "/small", files_addr, dark_files, f"127.0.0.1:{nginx.ports['files']}"),
        ("512 KiB file", "/big.bin", files_addr, dark_files,
         f"127.0.0.1:{nginx.ports['files']}"),
        (f"32 KiB streamed ({a.drip_gap_ms:g} ms gap)", "/drip", f"127.0.0.1:{drip}",
         dark_drip, f"127.0.0.1:{nginx.ports['drip']}"),
    ]
    runs = []
    for answer, path, *addresses in answers:
        n = a.ttfb_requests if path != "/drip" else max(10, a.ttfb_requests // 6)
        targets = list(zip(("direct", "dark", "nginx proxy_pass"), addresses))
        for _name, address in targets:
            ttfb_run(address, path, 20)  # warm-up: connections, caches
        for rnd in range(rounds):
            for name, address in rotated(targets, rnd):
                xs = ttfb_run(address, path, n)
                runs.append({"part": "ttfb", "round": rnd, "answer": answer, "target": name,
                             "median": median(xs), "p99": pct(xs, 0.99), "n": n})
            mine = {r["target"]: r for r in runs if r["round"] == rnd and r["answer"] == answer}
            print(f"  ttfb round {rnd + 1}/{rounds} {answer:<26} " +
                  " ".join(f"{t} {1e3 * r['median']:.3f} ms" for t, r in mine.items()),
                  file=sys.stderr)
    return runs


# ---------------------------------------------------------------------------------------------
# The summary.


def by_round(runs: list[dict], key: str = "target") -> dict[int, dict[str, dict]]:
    out: dict[int, dict[str, dict]] = {}
    for r in runs:
        out.setdefault(r["round"], {})[r[key]] = r
    return out


def ratio(runs: list[dict], num: str, den: str, per) -> str:
    xs = [per(rs[num]) / per(rs[den]) for rs in by_round(runs).values()
          if num in rs and den in rs and per(rs[den]) > 0]
    return span(xs) if xs else "n/a"


def grpc_lines(runs: list[dict], a) -> list[str]:
    def per_call(r):
        return r["cpu"] / r["ok"]

    names = list(dict.fromkeys(r["target"] for r in runs))
    table = ["| target | calls/s | proxy CPU µs/call | ÷ nginx grpc_pass |",
             "|---|---:|---:|---:|"]
    for name in names:
        mine = [r for r in runs if r["target"] == name]
        table.append(f"| {name} | {median(r['ok'] / r['seconds'] for r in mine):,.0f} | "
                     f"{span((1e6 * per_call(r) for r in mine), '.1f')} | "
                     f"{ratio(runs, name, 'nginx grpc_pass', per_call)} |")
    lines = [
        f"### gRPC unary, proxy CPU per call ({a.grpc_calls:,} calls per run, "
        f"{a.grpc_concurrency} in flight on one grpcio channel; grpcio aio server, h2c; 64-byte "
        "request, 200-byte answer)", "", *table, "",
        f"- dark ÷ nginx grpc_pass: {ratio(runs, 'dark', 'nginx grpc_pass', per_call)} "
        "(goal ≤ 1.0)",
        f"- dark forking ÷ nginx grpc_pass: "
        f"{ratio(runs, 'dark forking', 'nginx grpc_pass', per_call)} (goal ≤ 1.0)"]
    if any(r["target"] == "nginx grpc_pass+mirror" for r in runs):
        lines.append(f"- dark forking ÷ nginx grpc_pass+mirror: "
                     f"{ratio(runs, 'dark forking', 'nginx grpc_pass+mirror', per_call)}")
    for name in ("nginx grpc_pass+mirror", "dark forking"):
        mine = [r for r in runs if r["target"] == name]
        if mine:
            sent = (f" (dark's /metrics: {sum(int(r['dark_sent']) for r in mine):,} sent)"
                    if name == "dark forking" else "")
            lines.append(f"- {name}: the canary got {sum(r['canary'] for r in mine):,} of the "
                         f"{sum(r['ok'] for r in mine):,} calls answered{sent}")
    return lines


def ws_lines(runs: list[dict], a) -> list[str]:
    def mibps(r):
        return r["bytes"] / 2**20 / r["seconds"]

    def cpu_per_mib(r):
        return r["cpu"] / (r["bytes"] / 2**20)

    table = ["| target | MiB/s each way | proxy CPU ms/MiB |", "|---|---:|---:|"]
    for name in dict.fromkeys(r["target"] for r in runs):
        mine = [r for r in runs if r["target"] == name]
        table.append(f"| {name} | {span((mibps(r) for r in mine), '.1f')} | "
                     f"{span((1e3 * cpu_per_mib(r) for r in mine), '.2f')} |")
    return [
        f"### WebSocket echo tunnel ({a.ws_connections} connections × {a.ws_messages} binary "
        f"messages of {a.ws_size:,} bytes per run, python websockets client and echo server, "
        "compression off)", "", *table, "",
        f"- dark ÷ nginx Upgrade, throughput: {ratio(runs, 'dark', 'nginx Upgrade', mibps)} "
        "(goal ≥ 1.0)",
        f"- dark ÷ nginx Upgrade, proxy CPU per MiB: "
        f"{ratio(runs, 'dark', 'nginx Upgrade', cpu_per_mib)}"]


def ttfb_lines(runs: list[dict], a) -> list[str]:
    table = ["| answer | direct median | dark median | dark − direct | nginx − direct | "
             "dark p99 − direct p99 |", "|---|---:|---:|---:|---:|---:|"]
    worst = 0.0
    for answer in dict.fromkeys(r["answer"] for r in runs):
        mine = [r for r in runs if r["answer"] == answer]
        rounds = by_round(mine).values()

        def diff(target, key="median"):
            return [1e3 * (rs[target][key] - rs["direct"][key]) for rs in rounds
                    if target in rs and "direct" in rs]

        worst = max(worst, median(diff("dark")))
        table.append(
            f"| {answer} | {median(1e3 * r['median'] for r in mine if r['target'] == 'direct'):.3f}"
            f" ms | {median(1e3 * r['median'] for r in mine if r['target'] == 'dark'):.3f} ms | "
            f"{span(diff('dark'), '.3f')} ms | {span(diff('nginx proxy_pass'), '.3f')} ms | "
            f"{span(diff('dark', 'p99'), '.3f')} ms |")
    return [
        f"### Time to first byte, HTTP/1.1 keep-alive, sequential GETs ({a.ttfb_requests} per "
        f"run; {max(10, a.ttfb_requests // 6)} for the streamed answer)", "", *table, "",
        f"- largest median overhead of dark over direct: {worst:.3f} ms (goal ≤ 1 ms)"]


# ---------------------------------------------------------------------------------------------


def ensure_modules() -> None:
    """Re-runs this script with scripts/python-env.sh's interpreter when python3 lacks grpcio
    or websockets."""
    if all(importlib.util.find_spec(m) for m in ("grpc", "websockets")):
        return
    env = subprocess.run([os.path.join(REPO, "scripts", "python-env.sh")], capture_output=True,
                         text=True).stdout.strip()
    python = shutil.which(env) if env else None
    if python and os.path.realpath(python) != os.path.realpath(sys.executable) and \
            not os.environ.get("DARK_PROTOCOLS_REEXEC"):
        os.environ["DARK_PROTOCOLS_REEXEC"] = "1"
        os.execv(python, [python, os.path.abspath(__file__), *sys.argv[1:]])
    sys.exit("dark_protocols: needs grpcio and websockets (run scripts/python-deps.sh)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=env_int("BENCH_ROUNDS", 5))
    ap.add_argument("--grpc-calls", type=int, default=4000, help="unary calls per run")
    ap.add_argument("--grpc-concurrency", type=int, default=16, help="calls in flight")
    ap.add_argument("--ws-connections", type=int, default=4)
    ap.add_argument("--ws-messages", type=int, default=800, help="messages per connection")
    ap.add_argument("--ws-size", type=int, default=65536, help="bytes per message")
    ap.add_argument("--ttfb-requests", type=int, default=300, help="sequential GETs per run")
    ap.add_argument("--drip-gap-ms", type=float, default=20,
                    help="the streamed answer's pause between its two halves")
    ap.add_argument("--only", default="grpc,ws,ttfb", help="comma-separated parts to run")
    ap.add_argument("--hammer", default=default_hammer())
    ap.add_argument("--build-dir", default=default_build_dir())
    ap.add_argument("--no-pin", action="store_true", help="do not use taskset")
    ap.add_argument("--role", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    ensure_modules()
    if args.role:
        kind, rest = args.role[0], args.role[1:]
        roles = {"grpc-server": lambda: role_grpc_server(),
                 "grpc-client": lambda: role_grpc_client(rest[0], int(rest[1]), int(rest[2]),
                                                         rest[3] if len(rest) > 3 else ""),
                 "ws-server": lambda: role_ws_server(),
                 "ws-client": lambda: role_ws_client(rest[0], int(rest[1]), int(rest[2]),
                                                     int(rest[3])),
                 "drip-server": lambda: role_drip_server(float(rest[0]))}
        roles[kind]()
        return 0

    parts = {p.strip() for p in args.only.split(",") if p.strip()}
    args.out = os.path.join(args.build_dir, "dark_protocols")
    os.makedirs(args.out, exist_ok=True)
    hammer_source = os.path.relpath(args.hammer, REPO)
    args.hammer_copy = snapshot_hammer(args.hammer, args.build_dir, "hammer-under-test-protocols",
                                       "dark")
    pins = Pinning(not args.no_pin)
    tmp = tempfile.mkdtemp(prefix="hammer-bench-protocols-")
    atexit.register(shutil.rmtree, tmp, True)
    b = Bench(args, tmp, pins)
    info = RunInfo()

    # nginx's workers may drop root: the files live in a directory anyone may read.
    root = os.path.join(tmp, "files")
    os.makedirs(root)
    os.chmod(tmp, 0o755)
    with open(os.path.join(root, "big.bin"), "wb") as f:
        f.write(os.urandom(512 * 1024))
    os.chmod(os.path.join(root, "big.bin"), 0o644)
    files = Nginx(os.path.join(tmp, "nginx-files"), NGINX_FILES_CONF, pin=b.near, root=root)

    # The upstream servers first, then the nginx proxy in front of them (a part not run leaves
    # its nginx upstream pointing at port 1, never used).
    up = {"grpc_up": 1, "grpc_canary": 1, "ws_up": 1, "drip_up": 1}
    if "grpc" in parts:
        up["grpc_up"], up["grpc_canary"] = b.role("grpc-server"), b.role("grpc-server")
    if "ws" in parts:
        up["ws_up"] = b.role("ws-server")
    if "ttfb" in parts:
        up["drip_up"] = b.role("drip-server", str(args.drip_gap_ms))
    b.upstreams = up
    nginx = Nginx(os.path.join(tmp, "nginx-proxy"), NGINX_PROXY_CONF, pin=b.far,
                  ports=("probe", "grpc", "grpc_mirror", "ws", "files", "drip"),
                  files_up=files.port, **up)

    notes: list[str] = []
    runs: list[dict] = []
    sections: list[str] = []
    if "grpc" in parts:
        part = bench_grpc(b, nginx, args.rounds, notes)
        sections += grpc_lines(part, args) + [""]
        runs += part
    if "ws" in parts:
        part = bench_ws(b, nginx, args.rounds)
        sections += ws_lines(part, args) + [""]
        runs += part
    if "ttfb" in parts:
        part = bench_ttfb(b, nginx, files, args.rounds)
        sections += ttfb_lines(part, args) + [""]
        runs += part

    lines = [
        f"## dark_protocols — hammer dark vs nginx on gRPC, WebSocket and TTFB "
        f"({info.title_time()})", "",
        f"One nginx worker (all nginx proxies) and each `hammer dark --threads 1`; proxy CPU = "
        f"utime+stime of the proxy process from /proc/PID/stat over a run; {args.rounds} rounds "
        f"(order rotated), ratios and differences formed within a round: median (min–max) over "
        f"rounds. {pins.describe('upstreams and clients', 'the proxies')} "
        f"{info.host(hammer_source)}", "",
        *sections, *(f"- note: {x}" for x in notes)]
    write_results(args.out, "dark_protocols", "\n".join(lines).rstrip() + "\n", runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
