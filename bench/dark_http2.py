#!/usr/bin/env python3
"""hammer dark's CPU per request when it speaks HTTP/2 to its upstream or its dark cluster.

One nginx worker on 127.0.0.1 answers `200 ok` on two cleartext ports, one HTTP/2 with prior
knowledge (h2c, `listen ... http2`), one HTTP/1.1 (bench/h2_engine.py's nginx). Four
`hammer dark --threads 1` proxies in front of it, each started once:

  HTTP/1.1 upstream       --upstream http://127.0.0.1:H1
  --upstream-http2        --upstream-http2 --upstream http://127.0.0.1:H2C
  dark copies HTTP/1.1    --upstream http://127.0.0.1:H1 --dark canary=http://127.0.0.1:H1
                          (every request copied)
  --dark-http2            --upstream http://127.0.0.1:H1 --dark canary=http://127.0.0.1:H2C
                          --dark-http2 canary
(H1 and H2C: nginx's two ports.)

`hammer load` (1 thread, closed loop, C keep-alive HTTP/1.1 connections to the proxy) sends
a fixed number of requests N through each proxy per round; the proxy's CPU is utime+stime of
its process from /proc/PID/stat before and after, divided by the requests answered. Rounds
rotate the order; ratios of CPU per request are formed within a round, the median (min-max)
over rounds reported: --upstream-http2 / HTTP/1.1 upstream, --dark-http2 / dark copies
HTTP/1.1. With 2+ CPUs the proxies are pinned to the last CPU, nginx and the generator to the
first (taskset).

Usage: bench/dark_http2.py [--rounds 5] [--requests 40000] [--connections 50]
"""
# bench-timeout: 900
from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (REPO, Pinning, RunInfo, cpu_per_request, default_build_dir,  # noqa: E402
                      default_hammer, env_int, median, proc_cpu_seconds, read_line, round_ratio,
                      snapshot_hammer, start, write_results)
from h2_engine import start_nginx  # noqa: E402


def proxy_configs(h1: str, h2c: str) -> list[tuple[str, list[str]]]:
    copy = ["--regular-instances", "1", "--dark-multiplier", "canary=1"]
    return [
        ("HTTP/1.1 upstream", ["--upstream", h1]),
        ("--upstream-http2", ["--upstream-http2", "--upstream", h2c]),
        ("dark copies HTTP/1.1", ["--upstream", h1, "--dark", f"canary={h1}", *copy]),
        ("--dark-http2", ["--upstream", h1, "--dark", f"canary={h2c}", "--dark-http2", "canary",
                          *copy]),
    ]


def start_proxy(hammer: str, pin: list[str], extra: list[str], log) -> tuple[int, str]:
    """Starts `hammer dark` on a free port; returns (pid, address)."""
    p = start(pin + [hammer, "dark", "--listen", "127.0.0.1:0", "--threads", "1", *extra],
              stdout=subprocess.PIPE, stderr=log, text=True)
    address = read_line(p)
    if not address:
        sys.exit(f"hammer dark {' '.join(extra)} did not start (see {log.name})")
    return p.pid, address


def run_load(hammer: str, pin: list[str], url: str, requests: int, connections: int,
             tmp: str) -> dict:
    urls, summary = os.path.join(tmp, "url.txt"), os.path.join(tmp, "load.json")
    with open(urls, "w") as f:
        f.write(url + "\n")
    r = subprocess.run(pin + [hammer, "load", urls, "--loop", "-n", str(requests), "-c",
                              str(connections), "-t", "1", "--emit", "none", "-q",
                              "--summary-json", summary], capture_output=True, text=True,
                       timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"hammer load failed: {r.stderr[-500:]}")
    with open(summary) as f:
        return json.load(f)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=env_int("BENCH_ROUNDS", 5))
    ap.add_argument("--requests", type=int, default=40000, help="requests per run")
    ap.add_argument("--connections", type=int, default=50)
    ap.add_argument("--hammer", default=default_hammer())
    ap.add_argument("--build-dir", default=default_build_dir())
    ap.add_argument("--no-pin", action="store_true", help="do not use taskset")
    args = ap.parse_args()
    out_dir = os.path.join(args.build_dir, "dark_http2")
    os.makedirs(out_dir, exist_ok=True)
    hammer_source = os.path.relpath(args.hammer, REPO)
    hammer = snapshot_hammer(args.hammer, args.build_dir, "hammer-under-test-dark-h2", "dark")

    pins = Pinning(not args.no_pin)
    near_pin, proxy_pin = pins.first(), pins.last()
    tmp = tempfile.mkdtemp(prefix="hammer-bench-dark-h2-")
    atexit.register(shutil.rmtree, tmp, True)
    nginx = start_nginx(tmp, near_pin)
    log = open(os.path.join(out_dir, "proxies.log"), "w")
    proxies = []
    for name, extra in proxy_configs(f"http://127.0.0.1:{nginx.ports['h1_port']}",
                                     f"http://127.0.0.1:{nginx.ports['h2_port']}"):
        pid, address = start_proxy(hammer, proxy_pin, extra, log)
        proxies.append((name, pid, f"http://{address}/"))
        run_load(hammer, near_pin, f"http://{address}/", 2000, args.connections, tmp)  # warm-up

    info = RunInfo()
    runs = []
    for rnd in range(args.rounds):
        k = rnd % len(proxies)
        for name, pid, url in proxies[k:] + proxies[:k]:
            before = proc_cpu_seconds(pid)
            summary = run_load(hammer, near_pin, url, args.requests, args.connections, tmp)
            cpu = proc_cpu_seconds(pid) - before
            ok = summary["succeeded"]
            runs.append({"round": rnd, "proxy": name, "ok": ok, "failed": summary["failed"],
                         "cpu": cpu, "seconds": summary["seconds"]})
            print(f"  round {rnd + 1}/{args.rounds} {name:<22} {ok:>7} ok "
                  f"{summary['failed']:>4} failed  {1e6 * cpu / max(ok, 1):6.1f} us CPU/req",
                  file=sys.stderr)

    def ratio(num, den):
        return round_ratio(runs, "proxy", num, den)

    table = ["| proxy | req/s | proxy CPU µs/req | failed |", "|---|---:|---:|---:|"]
    for name, _pid, _url in proxies:
        mine = [r for r in runs if r["proxy"] == name]
        table.append(f"| {name} | {median([r['ok'] / r['seconds'] for r in mine]):,.0f} | "
                     f"{median([1e6 * cpu_per_request(r) for r in mine]):.1f} | "
                     f"{sum(r['failed'] for r in mine)} |")
    lines = [
        f"## dark_http2 — hammer dark's CPU per request, HTTP/2 vs HTTP/1.1 behind it "
        f"({info.title_time()})",
        "",
        f"nginx 1 worker (h2c and HTTP/1.1 ports); `hammer dark --threads 1`; `hammer load` "
        f"1 thread, {args.connections} HTTP/1.1 connections to the proxy, {args.requests:,} "
        f"requests per run, {args.rounds} rounds (order rotated); CPU = the proxy's "
        f"utime+stime (/proc/PID/stat); medians over rounds, ratios formed within each round: "
        f"median (min–max). {pins.describe('nginx and the generator', 'the proxies')} "
        f"{info.host(hammer_source)}",
        "",
        *table,
        "",
        f"- --upstream-http2 ÷ HTTP/1.1 upstream (proxy CPU per request): "
        f"{ratio('--upstream-http2', 'HTTP/1.1 upstream')}",
        f"- --dark-http2 ÷ dark copies HTTP/1.1 (every request copied once): "
        f"{ratio('--dark-http2', 'dark copies HTTP/1.1')}",
    ]
    write_results(out_dir, "dark_http2", "\n".join(lines) + "\n", runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
