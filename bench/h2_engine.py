#!/usr/bin/env python3
"""HTTP/2 load-engine benchmark: CPU-seconds per request, hammer load --http2 vs h2load.

One nginx worker on 127.0.0.1 answers `200 ok` on two cleartext ports: one speaking HTTP/2
with prior knowledge (h2c, `listen ... http2`), one HTTP/1.1. Each generator runs D seconds on
one thread, closed loop, with the same shape: C connections carrying M concurrent streams each
for HTTP/2 (h2load -c C -m M; hammer load --http2 -c C -m M), and C x M keep-alive connections
for HTTP/1.1 (h2load --h1; hammer load -c C*M), so the requests in flight are the same.

h2load is the anchor: it is nghttp2's own generator, on the same libnghttp2 as hammer. Ratios:
hammer --http2 / h2load (the issue's goal: <= 1.0), and for hammer itself HTTP/2 / HTTP/1.1.

As in bench/tls_engine.py (whose runner this reuses): the generator's own user+sys CPU (wait4
rusage) divided by the requests it says it completed; rounds interleave all tools (order
rotated each round), ratios are formed inside a round and the median over rounds is reported.
With 2+ CPUs nginx is pinned to CPU 0 and every generator to CPU 1 (taskset).

Usage: bench/h2_engine.py [--rounds 5] [--duration 5] [--connections 4] [--streams 16]
"""
from __future__ import annotations

import argparse
import atexit
import datetime
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import NGINX_HTTP_HEAD, snapshot_hammer, write_results  # noqa: E402
from tls_engine import (Tool, _started, children_of, cpu_model, cpu_per_request,  # noqa: E402
                        free_port, median, parse_h2load, parse_hammer, round_ratio, run_tool)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

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


def start_nginx(tmp: str, pin: list[str]) -> tuple[int, int, int]:
    """Starts nginx in tmp; returns (h2c port, HTTP/1.1 port, worker pid)."""
    os.makedirs(os.path.join(tmp, "tmp"), exist_ok=True)
    for _attempt in range(5):
        h2_port, h1_port = free_port(), free_port()
        conf = os.path.join(tmp, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(dir=tmp, h2_port=h2_port, h1_port=h1_port))
        log = open(os.path.join(tmp, "nginx.out"), "w")
        p = subprocess.Popen(
            pin + ["nginx", "-p", tmp, "-c", conf, "-e", os.path.join(tmp, "error.log")],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        _started.append(p)
        deadline = time.time() + 10
        while time.time() < deadline and p.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{h1_port}/", timeout=2) as r:
                    if r.read() == b"ok\n" and len(children_of(p.pid)) == 1:
                        return h2_port, h1_port, children_of(p.pid)[0]
            except OSError:
                pass
            time.sleep(0.1)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait()
    with open(os.path.join(tmp, "error.log")) as f:
        sys.exit("nginx did not start:\n" + f.read())


def make_tools(args, h2_url, h1_url, tmp, d: int) -> list[Tool]:
    c, m = args.connections, args.streams
    hjson = os.path.join(tmp, "hammer.json")

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
    wanted = [t for t in tools if shutil.which(t.argv[0]) or os.path.exists(t.argv[0])]
    missing = [t.name for t in tools if t not in wanted]
    if missing:
        print(f"# skipped (not installed): {', '.join(missing)}", file=sys.stderr)
    return wanted


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("BENCH_ROUNDS", 5)))
    ap.add_argument("--duration", type=int, default=int(os.environ.get("BENCH_DURATION", 5)),
                    help="seconds per run")
    ap.add_argument("--connections", type=int, default=4)
    ap.add_argument("--streams", type=int, default=16)
    ap.add_argument("--hammer", default=os.environ.get(
        "HAMMER", os.path.join(REPO, "build", "release", "hammer")))
    ap.add_argument("--build-dir", default=os.path.join(REPO, "build", "bench"))
    ap.add_argument("--no-pin", action="store_true", help="do not use taskset")
    args = ap.parse_args()
    out_dir = os.path.join(args.build_dir, "h2_engine")
    os.makedirs(out_dir, exist_ok=True)
    args.hammer_source = os.path.relpath(args.hammer, REPO)
    args.hammer = snapshot_hammer(args.hammer, args.build_dir, "hammer-under-test-h2", "load")

    cpus = sorted(os.sched_getaffinity(0))
    pinned = not args.no_pin and len(cpus) >= 2 and shutil.which("taskset") is not None
    server_pin = ["taskset", "-c", str(cpus[0])] if pinned else []
    client_pin = ["taskset", "-c", str(cpus[1])] if pinned else []

    tmp = tempfile.mkdtemp(prefix="hammer-bench-h2-")
    atexit.register(shutil.rmtree, tmp, True)
    h2_port, h1_port, worker = start_nginx(tmp, server_pin)
    h2_url, h1_url = f"http://127.0.0.1:{h2_port}/", f"http://127.0.0.1:{h1_port}/"
    tools = make_tools(args, h2_url, h1_url, tmp, args.duration)
    if not tools:
        sys.exit("no generator to run")
    timeout = args.duration + 30
    started = datetime.datetime.now().astimezone()
    load_start = os.getloadavg()[0]
    # Warm-up: nginx, page cache, CPU frequency.
    run_tool(make_tools(args, h2_url, h1_url, tmp, 1)[0], client_pin, tmp, timeout, worker)

    runs, broken = [], {}
    with open(os.path.join(out_dir, "raw.tsv"), "w") as raw:
        raw.write("round\ttool\tok\tfailed\tseconds\twall\tuser\tsys\tnginx_cpu\n")
        for rnd in range(args.rounds):
            k = rnd % len(tools)
            for t in tools[k:] + tools[:k]:  # rotated so no tool always runs first or last
                if t.name in broken:
                    continue
                try:
                    r = run_tool(t, client_pin, tmp, timeout, worker)
                except (RuntimeError, ValueError, OSError, KeyError) as e:
                    broken[t.name] = (str(e).strip().splitlines() or ["?"])[0][:200]
                    print(f"  {t.name}: FAILED, dropped: {e}", file=sys.stderr)
                    continue
                r["round"] = rnd
                runs.append(r)
                raw.write(f"{rnd}\t{t.name}\t{r['ok']}\t{r['failed']}\t{r['seconds']:.3f}\t"
                          f"{r['wall']:.3f}\t{r['user']:.4f}\t{r['sys']:.4f}\t"
                          f"{r['nginx_cpu']:.2f}\n")
                raw.flush()
                print(f"  round {rnd + 1}/{args.rounds} {t.name:<18} {r['ok']:>8} ok "
                      f"{r['failed']:>4} failed  {r['ok'] / r['seconds']:>9.0f} req/s  "
                      f"{1e6 * r['cpu'] / max(r['ok'], 1):6.2f} us CPU/req", file=sys.stderr)

    per_req = cpu_per_request

    def ratio(num, den):
        return round_ratio(runs, "tool", num, den)

    table = ["| tool | req/s | CPU µs/req | nginx µs/req | failed |", "|---|---:|---:|---:|---:|"]
    for t in tools:
        mine = [r for r in runs if r["tool"] == t.name]
        if not mine:
            continue
        table.append(
            f"| {t.name} | {median([r['ok'] / r['seconds'] for r in mine]):,.0f} | "
            f"{median([1e6 * per_req(r) for r in mine]):.2f} | "
            f"{median([1e6 * r['nginx_cpu'] / max(r['ok'], 1) for r in mine]):.1f} | "
            f"{sum(r['failed'] for r in mine)} |")
    elapsed = (datetime.datetime.now().astimezone() - started).total_seconds()
    lines = [
        f"## h2_engine — HTTP/2 CPU per request against one nginx worker "
        f"({started:%Y-%m-%d %H:%M %Z})",
        "",
        f"nginx 1 worker, cleartext; HTTP/2 with prior knowledge: {args.connections} connections "
        f"x {args.streams} streams; HTTP/1.1: {args.connections * args.streams} keep-alive "
        f"connections; 1 thread per generator, closed loop, {args.duration} s per run, "
        f"{args.rounds} rounds (order rotated); medians over rounds; ratios of CPU/request formed "
        f"within each round: median (min–max). CPU = user+sys of the generator (wait4 rusage). "
        + (f"nginx pinned to CPU {cpus[0]}, generators to CPU {cpus[1]}. " if pinned
           else "No CPU pinning. ") +
        f"Host: {cpu_model()}, {os.cpu_count()} CPUs, Linux {platform.release()}, load average "
        f"{load_start:.1f} at start and {os.getloadavg()[0]:.1f} at end; run took "
        f"{elapsed:.0f} s. hammer: {args.hammer_source}.",
        "",
        *table,
        "",
        f"- hammer --http2 ÷ h2load (CPU per request): {ratio('hammer --http2', 'h2load')}",
        "- hammer --http2 --no-error-pattern ÷ h2load (the same work: no body check): "
        f"{ratio('hammer --http2 --no-error-pattern', 'h2load')}",
        f"- hammer HTTP/2 ÷ hammer HTTP/1.1: {ratio('hammer --http2', 'hammer (HTTP/1.1)')}",
        f"- h2load HTTP/2 ÷ h2load --h1: {ratio('h2load', 'h2load --h1')}",
        *[f"- {t.name}: {t.note}" for t in tools if t.note],
        *[f"- {name}: run FAILED and was dropped ({why})" for name, why in broken.items()],
    ]
    summary = "\n".join(lines) + "\n"
    write_results(out_dir, "h2_engine", summary, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
