#!/usr/bin/env python3
"""Load-engine benchmark: CPU-seconds per request of HTTP load generators, side by side.

One nginx worker on 127.0.0.1 answers `200 ok` to every request; each generator keeps
50 connections busy for D seconds on one thread, closed loop. For every run we take the
generator's own user+sys CPU time (wait4 rusage of the process, children included) and the
number of requests it says it completed, and divide. Rounds interleave all tools (the order
rotates each round) and the ratios are formed inside a round, then the median over rounds is
reported, because the machine is shared and noisy.

With 2+ CPUs nginx is pinned to CPU 0 and every generator to CPU 1 (taskset). Throughput is
then bounded by the one nginx worker, so req/s says more about nginx and the noise than about
the generator; CPU per request is the figure of merit.

Standard library only. Writes the raw runs and a summary under --out, prints the summary.
Usage: bench/load_engine.py [--rounds 5] [--duration 5] [--connections 50] [--hammer PATH]
"""
from __future__ import annotations

import argparse
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (HAMMER_JSON, NGINX_OK_CONF, REPO, Nginx, Pinning, RunInfo,  # noqa: E402
                      Tool, cpu_table, default_build_dir, default_hammer, env_int, installed,
                      parse_ab, parse_driver, parse_h2load, parse_hammer, parse_hey, parse_wrk,
                      run_rounds, run_tool, snapshot_hammer, syscall_profile, write_results)


def make_tools(args, url, tmp, d: int) -> list[Tool]:
    c = args.connections
    one_line = os.path.join(tmp, "urls-1.txt")
    many_lines = os.path.join(tmp, "urls-10000.txt")
    with open(one_line, "w") as f:
        f.write(url + "\n")
    with open(many_lines, "w") as f:
        f.write((url + "\n") * 10000)
    driver = os.path.join(args.build_dir, "curl_multi_driver")
    hjson = os.path.join(tmp, HAMMER_JSON)
    hammer = [args.hammer, "load"]
    hflags = ["--loop", "-d", f"{d}s", "-c", str(c), "-t", "1", "--no-table", "-q",
              "--summary-json", hjson]
    tools = [
        Tool("wrk", ["wrk", "-t1", f"-c{c}", f"-d{d}s", url], parse_wrk),
        # -t bounds the time; -n only has to be larger than anything reachable in that time.
        Tool("ab -k", ["ab", "-k", "-q", "-c", str(c), "-t", str(d), "-n", "5000000", url],
             parse_ab),
        Tool("h2load --h1", ["h2load", "--h1", "-c", str(c), "-t", "1", "-D", str(d), url],
             parse_h2load),
        Tool("hey", ["hey", "-c", str(c), "-z", f"{d}s", "-cpus", "1", url], parse_hey),
        Tool("libcurl-multi socket", [driver, "-c", str(c), "-d", str(d), "--engine", "socket",
                                      url], parse_driver,
             note="curl_multi_socket_action + epoll, easy handles reused"),
        Tool("libcurl-multi perform", [driver, "-c", str(c), "-d", str(d), "--engine",
                                       "perform", url], parse_driver,
             note="curl_multi_perform + poll, new easy handle per request, "
                  "follow_location + cookies (the seed's settings)"),
        Tool("curb (seed, Ruby)", ["ruby", os.path.join(REPO, "bench", "curb_seed_driver.rb"),
                                   url, str(c), str(d)], parse_driver, stdout_to_null=True,
             note="the seed mapper's loop: Ruby curb Curl::Multi, records to /dev/null"),
        Tool("hammer --emit none", hammer + [one_line] + hflags + ["--emit", "none"],
             parse_hammer, note="1-line URL list"),
        Tool("hammer --emit none (10k-line list)", hammer + [many_lines] + hflags +
             ["--emit", "none"], parse_hammer,
             note="the same URL 10,000 times: a list replayed line by line"),
        Tool("hammer --emit records", hammer + [one_line] + hflags + ["--emit", "records"],
             parse_hammer, stdout_to_null=True,
             note="1-line URL list, records to /dev/null"),
    ]
    return installed(tools, args.only)


def build_driver(build_dir):
    """Builds bench/curl_multi_driver.c; without libcurl's headers (scripts/deps.sh bench) the
    libcurl rows are skipped as not installed."""
    src = os.path.join(REPO, "bench", "curl_multi_driver.c")
    exe = os.path.join(build_dir, "curl_multi_driver")
    os.makedirs(build_dir, exist_ok=True)
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        built = subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-o", exe, src, "-lcurl"],
                               capture_output=True, text=True)
        if built.returncode != 0:
            print(f"# curl_multi_driver not built:\n{built.stderr[-1000:]}", file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=env_int("BENCH_ROUNDS", 5))
    ap.add_argument("--duration", type=int, default=env_int("BENCH_DURATION", 5),
                    help="seconds per run")
    ap.add_argument("--connections", type=int, default=50)
    ap.add_argument("--hammer", default=default_hammer())
    ap.add_argument("--build-dir", default=default_build_dir())
    ap.add_argument("--out", default=None, help="results dir (default BUILD_DIR/load_engine)")
    ap.add_argument("--no-pin", action="store_true", help="do not use taskset")
    ap.add_argument("--strace-seconds", type=int, default=2,
                    help="length of the strace -c profile runs (0: skip)")
    ap.add_argument("--only", default="", help="comma list of substrings of tool names")
    args = ap.parse_args()
    out_dir = args.out or os.path.join(args.build_dir, "load_engine")
    os.makedirs(out_dir, exist_ok=True)
    build_driver(args.build_dir)
    hammer_source = os.path.relpath(args.hammer, REPO)
    args.hammer = snapshot_hammer(args.hammer, args.build_dir, "hammer-under-test", "load")

    pins = Pinning(not args.no_pin)
    tmp = tempfile.mkdtemp(prefix="hammer-bench-")
    atexit.register(shutil.rmtree, tmp, True)
    nginx = Nginx(tmp, NGINX_OK_CONF, pin=pins.first())
    url = f"http://127.0.0.1:{nginx.port}/"
    tools = make_tools(args, url, tmp, args.duration)
    if not tools:
        sys.exit("no generator to run")
    timeout = args.duration + 30

    info = RunInfo()
    print(f"# load_engine: nginx 1 worker at {url}; {pins.describe('nginx', 'generators')} "
          f"{args.connections} connections, 1 thread, {args.duration}s x {args.rounds} rounds, "
          f"{len(tools)} tools", file=sys.stderr)
    # Warm-up: nginx, page cache, CPU frequency.
    run_tool(make_tools(args, url, tmp, 1)[0], pins.last(), tmp, timeout, nginx.worker)

    def run(t):
        return run_tool(t, pins.last(), tmp, timeout, nginx.worker)
    runs, broken = run_rounds(tools, args.rounds, run, os.path.join(out_dir, "raw.tsv"))

    profile = []
    if args.strace_seconds > 0:
        picks = [t for t in make_tools(args, url, tmp, args.strace_seconds)
                 if t.name in ("wrk", "h2load --h1", "libcurl-multi socket", "hammer --emit none",
                               "hammer --emit none (10k-line list)")]
        profile = syscall_profile(picks, pins.last(), tmp, args.strace_seconds, nginx.worker)

    table = cpu_table(tools, runs, [("wrk", "x wrk"),
                                    ("libcurl-multi perform", "x curl perform (seed)"),
                                    ("libcurl-multi socket", "x curl socket")])
    lines = [
        f"## load_engine — CPU per request against one nginx worker ({info.title_time()})",
        "",
        f"{args.connections} connections, 1 thread/process per generator, closed loop, "
        f"{args.duration} s per run, {args.rounds} rounds (tool order rotated each round); "
        f"medians over rounds; ratios = CPU/request of the row ÷ that of the reference, "
        f"formed within each round: median (min–max over rounds). CPU = user+sys of the "
        f"generator process (wait4 rusage); requests = those the tool reports completed. "
        f"{pins.describe('nginx', 'generators')} {info.host(hammer_source)}",
        "",
        *table,
        "",
        *[f"- {t.name}: {t.note}" for t in tools if t.note],
        *[f"- {name}: run FAILED and was dropped ({why})" for name, why in broken.items()],
    ]
    if profile:
        lines += ["", f"Syscalls per request (strace -f -c, {args.strace_seconds} s runs; "
                      "strace slows the run, the counts per request are what matters):", ""]
        lines += [f"- {p}" for p in profile]
    write_results(out_dir, "load_engine", "\n".join(lines) + "\n", runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
