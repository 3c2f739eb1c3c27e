#!/usr/bin/env python3
"""TLS load-engine benchmark: CPU-seconds per request over HTTPS keep-alive, hammer vs wrk.

One nginx worker on 127.0.0.1 serves `200 ok` over TLS (a P-256 certificate from a CA made for
the run with `openssl`, `ssl_session_cache shared`, keepalive_requests 1000000); each generator
keeps 50 keep-alive connections busy for D seconds on one thread, closed loop. So the 50
handshakes happen once at the start and the figure is dominated by TLS record work (AES-GCM
encrypt/decrypt and the extra copies) on top of the HTTP work that bench/load_engine.py measures.

As in bench/load_engine.py: the generator's own user+sys CPU (wait4 rusage) divided by the
requests it says it completed; rounds interleave all tools (order rotated each round), ratios
are formed inside a round and the median over rounds is reported. With 2+ CPUs nginx is pinned
to CPU 0 and every generator to CPU 1 (taskset).

Standard library only (plus the openssl, nginx, wrk and optionally h2load commands). Writes the
raw runs and a summary under --out, and the summary to $BENCH_SUMMARY_DIR/tls_engine.md.
Usage: bench/tls_engine.py [--rounds 5] [--duration 5] [--connections 50] [--hammer PATH]
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
                      make_certificates, parse_h2load, parse_hammer, parse_wrk, run_rounds,
                      run_tool, snapshot_hammer, syscall_profile, write_results)

NGINX_CONF = NGINX_HTTP_HEAD + """\
  ssl_protocols TLSv1.2 TLSv1.3;
  ssl_session_cache shared:bench:10m;
  ssl_session_timeout 10m;
  server {{
    listen 127.0.0.1:{port} ssl backlog=4096;
    ssl_certificate {cert};
    ssl_certificate_key {key};
    location / {{ return 200 "ok\\n"; }}
  }}
}}
"""


def make_tools(args, url, ca, tmp, d: int) -> list[Tool]:
    c = args.connections
    one_line = os.path.join(tmp, "urls-1.txt")
    with open(one_line, "w") as f:
        f.write(url + "\n")
    hjson = os.path.join(tmp, HAMMER_JSON)
    hammer = [args.hammer, "load", one_line, "--loop", "-d", f"{d}s", "-c", str(c), "-t", "1",
              "--no-table", "-q", "--summary-json", hjson, "--emit", "none"]
    tools = [
        Tool("wrk", ["wrk", "-t1", f"-c{c}", f"-d{d}s", url], parse_wrk,
             note="wrk does not verify the certificate"),
        Tool("h2load --h1", ["h2load", "--h1", "-c", str(c), "-t", "1", "-D", str(d), url],
             parse_h2load, note="HTTP/1.1 over TLS (ALPN http/1.1), no verification"),
        Tool("hammer --insecure", hammer + ["--insecure"], parse_hammer,
             note="1-line URL list, --emit none, no verification (as wrk)"),
        Tool("hammer --cacert", hammer + ["--cacert", ca], parse_hammer,
             note="same, verifying the chain and the IP SAN against the run's CA"),
    ]
    return installed(tools, args.only)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=env_int("BENCH_ROUNDS", 5))
    ap.add_argument("--duration", type=int, default=env_int("BENCH_DURATION", 5),
                    help="seconds per run")
    ap.add_argument("--connections", type=int, default=50)
    ap.add_argument("--hammer", default=default_hammer())
    ap.add_argument("--build-dir", default=default_build_dir())
    ap.add_argument("--out", default=None, help="results dir (default BUILD_DIR/tls_engine)")
    ap.add_argument("--no-pin", action="store_true", help="do not use taskset")
    ap.add_argument("--only", default="", help="comma list of substrings of tool names")
    ap.add_argument("--strace-seconds", type=int, default=2,
                    help="length of the strace -c profile runs (0: skip)")
    args = ap.parse_args()
    out_dir = args.out or os.path.join(args.build_dir, "tls_engine")
    os.makedirs(out_dir, exist_ok=True)
    hammer_source = os.path.relpath(args.hammer, REPO)
    args.hammer = snapshot_hammer(args.hammer, args.build_dir, "hammer-under-test-tls", "load")

    pins = Pinning(not args.no_pin)
    tmp = tempfile.mkdtemp(prefix="hammer-bench-tls-")
    atexit.register(shutil.rmtree, tmp, True)
    ca, cert, key = make_certificates(tmp)
    nginx = Nginx(tmp, NGINX_CONF, pin=pins.first(), ca=ca, cert=cert, key=key)
    url = f"https://127.0.0.1:{nginx.port}/"
    tools = make_tools(args, url, ca, tmp, args.duration)
    if not tools:
        sys.exit("no generator to run")
    timeout = args.duration + 30

    info = RunInfo()
    print(f"# tls_engine: nginx 1 worker at {url}, {nginx.cipher}; "
          f"{pins.describe('nginx', 'generators')} {args.connections} connections, 1 thread, "
          f"{args.duration}s x {args.rounds} rounds, {len(tools)} tools", file=sys.stderr)
    # Warm-up: nginx, page cache, CPU frequency.
    run_tool(make_tools(args, url, ca, tmp, 1)[0], pins.last(), tmp, timeout, nginx.worker)

    def run(t):
        return run_tool(t, pins.last(), tmp, timeout, nginx.worker)
    runs, broken = run_rounds(tools, args.rounds, run, os.path.join(out_dir, "raw.tsv"),
                              name_width=20)

    profile = []
    if args.strace_seconds > 0:
        profile = syscall_profile(make_tools(args, url, ca, tmp, args.strace_seconds),
                                  pins.last(), tmp, args.strace_seconds, nginx.worker)

    lines = [
        f"## tls_engine — HTTPS keep-alive CPU per request against one nginx worker "
        f"({info.title_time()})",
        "",
        f"nginx 1 worker, TLS ({nginx.cipher}, P-256 certificate), {args.connections} keep-alive "
        f"connections, 1 thread/process per generator, closed loop, {args.duration} s per run, "
        f"{args.rounds} rounds (tool order rotated each round); medians over rounds; ratios = "
        f"CPU/request of the row ÷ that of wrk, formed within each round: median (min–max over "
        f"rounds). CPU = user+sys of the generator process (wait4 rusage); requests = those the "
        f"tool reports completed. {pins.describe('nginx', 'generators')} "
        f"{info.host(hammer_source)}",
        "",
        *cpu_table(tools, runs, [("wrk", "x wrk")]),
        "",
        *[f"- {t.name}: {t.note}" for t in tools if t.note],
        *[f"- {name}: run FAILED and was dropped ({why})" for name, why in broken.items()],
    ]
    if profile:
        lines += ["", f"Syscalls per request (strace -f -c, {args.strace_seconds} s runs; "
                      "strace slows the run, the counts per request are what matters):", ""]
        lines += [f"- {p}" for p in profile]
    write_results(out_dir, "tls_engine", "\n".join(lines) + "\n", runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
