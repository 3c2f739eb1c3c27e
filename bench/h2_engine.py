#!/usr/bin/env python3
"""HTTP/2 load-engine benchmark: CPU-seconds per request, hammer load --http2 vs h2load.

One nginx worker on 127.0.0.1 answers `200 ok` on two cleartext ports: one speaking HTTP/2
with prior knowledge (h2c, `listen ... http2`), one HTTP/1.1. Each generator runs D seconds on
one thread, closed loop, with the same shape: C connections carrying M concurrent streams each
for HTTP/2 (h2load -c C -m M; hammer load --http2 -c C -m M), and C x M keep-alive connections
for HTTP/1.1 (h2load --h1; hammer load -c C*M), so the requests in flight are the same.

h2load is the anchor: it is nghttp2's own generator, on the same libnghttp2 as hammer. Ratios:
hammer --http2 / h2load (goal: <= 1.0), and for hammer itself HTTP/2 / HTTP/1.1.

As in bench/tls_engine.py (both use bench/benchlib.py's runner): the generator's own user+sys
CPU (wait4 rusage) divided by the requests it says it completed; rounds interleave all tools
(order rotated each round), ratios are formed inside a round and the median over rounds is
reported.
With 2+ CPUs nginx is pinned to CPU 0 and every generator to CPU 1 (taskset).

Usage: bench/h2_engine.py [--rounds 5] [--duration 5] [--connections 4] [--streams 16]
"""
from __future__ import annotations

import argparse
import atexit
import os
import shutil
import sys
import tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (HAMMER_JSON, NGINX_HTTP_HEAD, REPO, Nginx, Pinning, RunInfo,  # noqa: E402
                      Tool, cpu_table, default_build_dir, default_hammer, env_int, installed,
                      parse_h2load, parse_hammer, round_ratio, run_rounds, run_tool,
                      snapshot_hammer, write_results)

# One worker, two cleartext ports: h2_port speaks HTTP/2 with prior knowledge, h1_port HTTP/1.1.
NGINX_CONF = NGINX_HTTP_HEAD + """\
  http2_max_concurrent_streams 256;
  server {{
    listen 127.0.0.1:{h2_port} http2 backlog=4096;
    location / {{ return 200 "ok\\n"; }}
  }}
  server {{
    listen 127.0.0.1:{h1_port} backlog=4096;
    location / {{ return 200 "ok\\n"; }}
  }}
}}
"""


def start_nginx(directory: str, pin: list[str]) -> Nginx:
    """nginx with NGINX_CONF: .ports["h2_port"] and .ports["h1_port"]."""
    return Nginx(directory, NGINX_CONF, pin=pin, ports=("h2_port", "h1_port"), probe="h1_port")


def make_tools(args, h2_url, h1_url, tmp, d: int) -> list[Tool]:
    c, m = args.connections, args.streams
    hjson = os.path.join(tmp, HAMMER_JSON)

    def hammer(url, *extra):
        urls = os.path.join(tmp, f"urls-{abs(hash(url))}.txt")
        with open(urls, "w") as f:
            f.write(url + "\n")
        return [args.hammer, "load", urls, "--loop", "-d", f"{d}s", "-t", "1", "--no-table", "-q",
                "--summary-json", hjson, "--emit", "none", *extra]

    tools = [
        Tool("h2load", ["h2load", "-c", str(c), "-m", str(m), "-t", "1", "-D", str(d), h2_url],
             parse_h2load, note=f"h2c, {c} connections x {m} streams"),
        Tool("hammer --http2", hammer(h2_url, "--http2", "-c", str(c), "-m", str(m)),
             parse_hammer, note=f"h2c, {c} connections x {m} streams, --emit none"),
        # h2load never reads a body; hammer checks each against the seed's --error-pattern by
        # default. This row does the same work as h2load, to show what that check costs.
        Tool("hammer --http2 --no-error-pattern",
             hammer(h2_url, "--http2", "-c", str(c), "-m", str(m), "--no-error-pattern"),
             parse_hammer, note=f"h2c, {c} connections x {m} streams, --emit none, no body check"),
        Tool("h2load --h1", ["h2load", "--h1", "-c", str(c * m), "-t", "1", "-D", str(d),
                             h1_url], parse_h2load,
             note=f"HTTP/1.1, {c * m} keep-alive connections"),
        Tool("hammer (HTTP/1.1)", hammer(h1_url, "-c", str(c * m)), parse_hammer,
             note=f"HTTP/1.1, {c * m} keep-alive connections, --emit none"),
    ]
    return installed(tools)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=env_int("BENCH_ROUNDS", 5))
    ap.add_argument("--duration", type=int, default=env_int("BENCH_DURATION", 5),
                    help="seconds per run")
    ap.add_argument("--connections", type=int, default=4)
    ap.add_argument("--streams", type=int, default=16)
    ap.add_argument("--hammer", default=default_hammer())
    ap.add_argument("--build-dir", default=default_build_dir())
    ap.add_argument("--no-pin", action="store_true", help="do not use taskset")
    args = ap.parse_args()
    out_dir = os.path.join(args.build_dir, "h2_engine")
    os.makedirs(out_dir, exist_ok=True)
    hammer_source = os.path.relpath(args.hammer, REPO)
    args.hammer = snapshot_hammer(args.hammer, args.build_dir, "hammer-under-test-h2", "load")

    pins = Pinning(not args.no_pin)
    tmp = tempfile.mkdtemp(prefix="hammer-bench-h2-")
    atexit.register(shutil.rmtree, tmp, True)
    nginx = start_nginx(tmp, pins.first())
    h2_url = f"http://127.0.0.1:{nginx.ports['h2_port']}/"
    h1_url = f"http://127.0.0.1:{nginx.ports['h1_port']}/"
    tools = make_tools(args, h2_url, h1_url, tmp, args.duration)
    if not tools:
        sys.exit("no generator to run")
    timeout = args.duration + 30
    info = RunInfo()
    # Warm-up: nginx, page cache, CPU frequency.
    run_tool(make_tools(args, h2_url, h1_url, tmp, 1)[0], pins.last(), tmp, timeout,
             nginx.worker)

    def run(t):
        return run_tool(t, pins.last(), tmp, timeout, nginx.worker)
    runs, broken = run_rounds(tools, args.rounds, run, os.path.join(out_dir, "raw.tsv"),
                              name_width=18)

    def ratio(num, den):
        return round_ratio(runs, "tool", num, den)

    lines = [
        f"## h2_engine — HTTP/2 CPU per request against one nginx worker ({info.title_time()})",
        "",
        f"nginx 1 worker, cleartext; HTTP/2 with prior knowledge: {args.connections} connections "
        f"x {args.streams} streams; HTTP/1.1: {args.connections * args.streams} keep-alive "
        f"connections; 1 thread per generator, closed loop, {args.duration} s per run, "
        f"{args.rounds} rounds (order rotated); medians over rounds; ratios of CPU/request formed "
        f"within each round: median (min–max). CPU = user+sys of the generator (wait4 rusage). "
        f"{pins.describe('nginx', 'generators')} {info.host(hammer_source)}",
        "",
        *cpu_table(tools, runs, []),
        "",
        f"- hammer --http2 ÷ h2load (CPU per request): {ratio('hammer --http2', 'h2load')}",
        "- hammer --http2 --no-error-pattern ÷ h2load (the same work: no body check): "
        f"{ratio('hammer --http2 --no-error-pattern', 'h2load')}",
        f"- hammer HTTP/2 ÷ hammer HTTP/1.1: {ratio('hammer --http2', 'hammer (HTTP/1.1)')}",
        f"- h2load HTTP/2 ÷ h2load --h1: {ratio('h2load', 'h2load --h1')}",
        *[f"- {t.name}: {t.note}" for t in tools if t.note],
        *[f"- {name}: run FAILED and was dropped ({why})" for name, why in broken.items()],
    ]
    write_results(out_dir, "h2_engine", "\n".join(lines) + "\n", runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
