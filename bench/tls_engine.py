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
import datetime
import json
import os
import platform
import re
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (NGINX_HTTP_HEAD, https_get, make_certificates,  # noqa: E402
                      snapshot_hammer, write_results)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLK_TCK = os.sysconf("SC_CLK_TCK")

# ---------------------------------------------------------------------------------------------
# Processes we started, so every exit path kills them.

_started: list[subprocess.Popen] = []


def _kill_all() -> None:
    for p in _started:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.time() + 3
    for p in _started:
        while p.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def _on_signal(signum, _frame):
    sys.exit(128 + signum)


atexit.register(_kill_all)
signal.signal(signal.SIGTERM, _on_signal)
signal.signal(signal.SIGINT, _on_signal)
signal.signal(signal.SIGHUP, _on_signal)

# ---------------------------------------------------------------------------------------------
# A CA and a server certificate for 127.0.0.1, made for this run.


# ---------------------------------------------------------------------------------------------
# nginx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


def children_of(pid: int) -> list[int]:
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(entry))
    return kids


def proc_cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


def start_nginx(tmp: str, pin: list[str], cert: str, key: str, ca: str) -> tuple[int, int, str]:
    """Starts nginx in tmp; returns (port, worker pid, negotiated protocol and cipher)."""
    os.makedirs(os.path.join(tmp, "tmp"), exist_ok=True)
    for _attempt in range(5):
        port = free_port()
        conf = os.path.join(tmp, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(dir=tmp, port=port, cert=cert, key=key))
        log = open(os.path.join(tmp, "nginx.out"), "w")
        p = subprocess.Popen(
            pin + ["nginx", "-p", tmp, "-c", conf, "-e", os.path.join(tmp, "error.log")],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        _started.append(p)
        deadline = time.time() + 10
        while time.time() < deadline and p.poll() is None:
            try:
                body, cipher = https_get(port, ca)
                if body == b"ok\n":
                    workers = children_of(p.pid)
                    if len(workers) == 1:
                        return port, workers[0], cipher
            except (OSError, ssl.SSLError):
                pass
            time.sleep(0.1)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait()
    with open(os.path.join(tmp, "error.log")) as f:
        sys.exit("nginx did not start:\n" + f.read())


# ---------------------------------------------------------------------------------------------
# Generators: how to run each one and how to read its request count from its own output.


class Tool:
    def __init__(self, name, argv, parse, stdout_to_null=False, note=""):
        self.name = name
        self.argv = argv
        self.parse = parse  # (stdout, stderr, tmpdir) -> (ok, failed, seconds)
        self.stdout_to_null = stdout_to_null
        self.note = note


def _int(pattern, text, default=None):
    m = re.search(pattern, text, re.M)
    if not m:
        if default is not None:
            return default
        raise ValueError(f"no match for {pattern!r} in:\n{text[-2000:]}")
    return int(m.group(1))


def _float(pattern, text):
    m = re.search(pattern, text, re.M)
    if not m:
        raise ValueError(f"no match for {pattern!r} in:\n{text[-2000:]}")
    return float(m.group(1))


def parse_wrk(out, err, _):
    m = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m),", out)
    if not m:
        raise ValueError("wrk: no 'requests in' line:\n" + out + err)
    total = int(m.group(1))
    secs = float(m.group(2)) * {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60}[m.group(3)]
    non2xx = _int(r"Non-2xx or 3xx responses:\s+(\d+)", out, 0)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    errors = sum(int(x) for x in sock.groups()) if sock else 0
    return total - non2xx, non2xx + errors, secs


def parse_h2load(out, err, _):
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                  r"(\d+) failed, (\d+) errored, (\d+) timeout", out)
    if not m:
        raise ValueError("h2load: no requests line:\n" + out + err)
    secs = _float(r"finished in ([\d.]+)s", out)
    # h2load's own counts (its manual, OUTPUT): "succeeded" ended with a 2xx or 3xx, "failed"
    # includes the errored and timed-out ones. Its "status codes" also count answers whose
    # stream had not ended when a -D run stopped, so "done" less the 2xx went negative.
    return int(m.group(4)), int(m.group(5)), secs


def parse_hammer(out, err, tmp):
    with open(os.path.join(tmp, "hammer.json")) as f:
        s = json.load(f)
    return int(s["succeeded"]), int(s["failed"]), float(s["seconds"])


def make_tools(args, url, ca, tmp, d: int) -> list[Tool]:
    c = args.connections
    one_line = os.path.join(tmp, "urls-1.txt")
    with open(one_line, "w") as f:
        f.write(url + "\n")
    hjson = os.path.join(tmp, "hammer.json")
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
    wanted = [t for t in tools if shutil.which(t.argv[0]) or os.path.exists(t.argv[0])]
    missing = [t.name for t in tools if t not in wanted]
    if missing:
        print(f"# skipped (not installed): {', '.join(missing)}", file=sys.stderr)
    if args.only:
        keep = [s.strip() for s in args.only.split(",")]
        wanted = [t for t in wanted if any(k in t.name for k in keep)]
    return wanted


# ---------------------------------------------------------------------------------------------
# One measured run.


def run_tool(tool: Tool, pin, tmp, timeout, nginx_pid) -> dict:
    out_path = os.path.join(tmp, "out.txt")
    err_path = os.path.join(tmp, "err.txt")
    hjson = os.path.join(tmp, "hammer.json")
    if os.path.exists(hjson):
        os.unlink(hjson)
    with open(out_path, "w") as out, open(err_path, "w") as err:
        stdout = subprocess.DEVNULL if tool.stdout_to_null else out
        nginx_before = proc_cpu_seconds(nginx_pid)
        t0 = time.monotonic()
        p = subprocess.Popen(pin + tool.argv, stdout=stdout, stderr=err, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        _started.append(p)
        killer = threading.Timer(timeout, lambda: os.killpg(p.pid, signal.SIGKILL))
        killer.start()
        # wait4 gives this child's rusage (its own waited-for children included).
        _, status, ru = os.wait4(p.pid, 0)
        killer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - t0
        nginx_cpu = proc_cpu_seconds(nginx_pid) - nginx_before
        _started.remove(p)
    with open(out_path) as f:
        out_text = f.read()
    with open(err_path) as f:
        err_text = f.read()
    if p.returncode != 0:
        raise RuntimeError(f"{tool.name} exited {p.returncode}:\n{out_text[-1500:]}\n"
                           f"{err_text[-1500:]}")
    ok, failed, secs = tool.parse(out_text, err_text, tmp)
    if ok == 0:
        raise RuntimeError(f"{tool.name}: no successful request:\n{out_text[-1500:]}\n"
                           f"{err_text[-1500:]}")
    return {"tool": tool.name, "ok": ok, "failed": failed, "seconds": secs, "wall": wall,
            "user": ru.ru_utime, "sys": ru.ru_stime, "cpu": ru.ru_utime + ru.ru_stime,
            "nginx_cpu": nginx_cpu}


# ---------------------------------------------------------------------------------------------
# Syscall profile: strace -c on a short run of each tool, counts per completed request.


def syscall_profile(tools, pin, tmp, seconds, nginx_pid) -> list[str]:
    if not shutil.which("strace"):
        return ["(strace not installed)"]
    lines = []
    for t in tools:
        trace = os.path.join(tmp, "strace.txt")
        st = Tool(t.name, ["strace", "-f", "-c", "-o", trace] + t.argv, t.parse, t.stdout_to_null)
        try:
            r = run_tool(st, pin, tmp, seconds + 60, nginx_pid)
        except Exception as e:  # noqa: BLE001 - report and continue
            lines.append(f"{t.name}: strace run failed: {e}")
            continue
        counts = {}
        with open(trace) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
                    counts[parts[-1]] = int(parts[3])
        n = max(r["ok"] + r["failed"], 1)
        total = sum(counts.values())
        top = sorted(counts.items(), key=lambda kv: -kv[1])[:6]
        lines.append(f"{t.name}: {total / n:.2f} syscalls/request over {n} requests — " +
                     ", ".join(f"{k} {v / n:.2f}" for k, v in top))
    return lines


# ---------------------------------------------------------------------------------------------


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def cpu_per_request(run):
    """CPU seconds per answered request of one run (a dict with "cpu" and "ok")."""
    return run["cpu"] / max(run["ok"], 1)


def round_ratio(runs, name_key, num, den):
    """num's CPU per request ÷ den's, formed within each round (the same machine state), as
    "median (min–max)" over rounds; "n/a" when no round ran both."""
    by_round = {}
    for r in runs:
        by_round.setdefault(r["round"], {})[r[name_key]] = r
    xs = [cpu_per_request(rs[num]) / cpu_per_request(rs[den]) for rs in by_round.values()
          if num in rs and den in rs and cpu_per_request(rs[den]) > 0]
    return f"{median(xs):.2f} ({min(xs):.2f}–{max(xs):.2f})" if xs else "n/a"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("BENCH_ROUNDS", 5)))
    ap.add_argument("--duration", type=int, default=int(os.environ.get("BENCH_DURATION", 5)),
                    help="seconds per run")
    ap.add_argument("--connections", type=int, default=50)
    ap.add_argument("--hammer", default=os.environ.get(
        "HAMMER", os.path.join(REPO, "build", "release", "hammer")))
    ap.add_argument("--build-dir", default=os.path.join(REPO, "build", "bench"))
    ap.add_argument("--out", default=None, help="results dir (default BUILD_DIR/tls_engine)")
    ap.add_argument("--no-pin", action="store_true", help="do not use taskset")
    ap.add_argument("--only", default="", help="comma list of substrings of tool names")
    ap.add_argument("--strace-seconds", type=int, default=2,
                    help="length of the strace -c profile runs (0: skip)")
    args = ap.parse_args()
    out_dir = args.out or os.path.join(args.build_dir, "tls_engine")
    os.makedirs(out_dir, exist_ok=True)
    args.hammer_source = os.path.relpath(args.hammer, REPO)
    args.hammer = snapshot_hammer(args.hammer, args.build_dir, "hammer-under-test-tls", "load")

    ncpu = len(os.sched_getaffinity(0))
    pinned = not args.no_pin and ncpu >= 2 and shutil.which("taskset") is not None
    cpus = sorted(os.sched_getaffinity(0))
    server_pin = ["taskset", "-c", str(cpus[0])] if pinned else []
    client_pin = ["taskset", "-c", str(cpus[1])] if pinned else []

    tmp = tempfile.mkdtemp(prefix="hammer-bench-tls-")
    atexit.register(shutil.rmtree, tmp, True)
    ca, cert, key = make_certificates(tmp)
    port, worker, cipher = start_nginx(tmp, server_pin, cert, key, ca)
    url = f"https://127.0.0.1:{port}/"
    tools = make_tools(args, url, ca, tmp, args.duration)
    if not tools:
        sys.exit("no generator to run")
    timeout = args.duration + 30

    started = datetime.datetime.now().astimezone()
    load_start = os.getloadavg()[0]
    hammer_built = datetime.datetime.fromtimestamp(os.path.getmtime(args.hammer)).astimezone()
    placement = (f"nginx on CPU {cpus[0]}, generators on CPU {cpus[1]}" if pinned
                 else "no pinning")
    print(f"# tls_engine: nginx 1 worker at {url} ({cipher}; {placement}), "
          f"{args.connections} connections, 1 thread, {args.duration}s x {args.rounds} rounds, "
          f"{len(tools)} tools", file=sys.stderr)
    # Warm-up: nginx, page cache, CPU frequency.
    if shutil.which("wrk"):
        run_tool(Tool("wrk", ["wrk", "-t1", f"-c{args.connections}", "-d1s", url], parse_wrk),
                 client_pin, tmp, timeout, worker)

    runs = []
    broken: dict[str, str] = {}
    raw_path = os.path.join(out_dir, "raw.tsv")
    with open(raw_path, "w") as raw:
        raw.write("round\ttool\tok\tfailed\tseconds\twall\tuser\tsys\tnginx_cpu\n")
        for rnd in range(args.rounds):
            k = rnd % len(tools)
            order = tools[k:] + tools[:k]  # rotate so no tool always runs first or last
            for t in order:
                if t.name in broken:
                    continue
                try:
                    r = run_tool(t, client_pin, tmp, timeout, worker)
                except (RuntimeError, ValueError, OSError, KeyError) as e:
                    broken[t.name] = str(e).strip().splitlines()[0][:200] if str(e) else "?"
                    print(f"  {t.name}: FAILED, dropped: {e}", file=sys.stderr)
                    continue
                r["round"] = rnd
                runs.append(r)
                raw.write(f"{rnd}\t{t.name}\t{r['ok']}\t{r['failed']}\t{r['seconds']:.3f}\t"
                          f"{r['wall']:.3f}\t{r['user']:.4f}\t{r['sys']:.4f}\t"
                          f"{r['nginx_cpu']:.2f}\n")
                raw.flush()
                print(f"  round {rnd + 1}/{args.rounds} {t.name:<20} {r['ok']:>8} ok "
                      f"{r['failed']:>4} failed  {r['ok'] / r['seconds']:>9.0f} req/s  "
                      f"{1e6 * r['cpu'] / max(r['ok'], 1):6.2f} us CPU/req", file=sys.stderr)

    profile = []
    if args.strace_seconds > 0:
        profile = syscall_profile(make_tools(args, url, ca, tmp, args.strace_seconds), client_pin,
                                  tmp, args.strace_seconds, worker)

    def per_req(r):
        return r["cpu"] / max(r["ok"], 1)

    by_round = {}
    for r in runs:
        by_round.setdefault(r["round"], {})[r["tool"]] = r
    refs = [(n, h) for n, h in [("wrk", "x wrk")] if any(r["tool"] == n for r in runs)]
    t_rounds = len(by_round)
    rows = []
    for t in tools:
        mine = [r for r in runs if r["tool"] == t.name]
        if not mine:
            continue
        row = {
            "tool": t.name,
            "rps": median([r["ok"] / r["seconds"] for r in mine]),
            "us": median([1e6 * per_req(r) for r in mine]),
            "user_share": median([r["user"] / max(r["cpu"], 1e-9) for r in mine]),
            "nginx_us": median([1e6 * r["nginx_cpu"] / max(r["ok"], 1) for r in mine]),
            "failed": sum(r["failed"] for r in mine),
            "ratios": [],
        }
        for ref, _ in refs:
            ratios = [per_req(rs[t.name]) / per_req(rs[ref]) for rs in by_round.values()
                      if t.name in rs and ref in rs]
            row["ratios"].append((median(ratios), min(ratios, default=float("nan")),
                                  max(ratios, default=float("nan"))))
        rows.append(row)

    head = ["tool", "req/s", "CPU µs/req", "user %", "nginx µs/req"] + [h for _, h in refs] + \
           ["failed"]
    table = ["| " + " | ".join(head) + " |",
             "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for row in rows:
        cells = [row["tool"], f"{row['rps']:,.0f}", f"{row['us']:.2f}",
                 f"{100 * row['user_share']:.0f}", f"{row['nginx_us']:.1f}"] + \
                [f"{m:.2f} ({lo:.2f}–{hi:.2f})" if t_rounds > 1 else f"{m:.2f}"
                 for m, lo, hi in row["ratios"]] + [str(row["failed"])]
        table.append("| " + " | ".join(cells) + " |")

    elapsed = (datetime.datetime.now().astimezone() - started).total_seconds()
    lines = [
        f"## tls_engine — HTTPS keep-alive CPU per request against one nginx worker "
        f"({started:%Y-%m-%d %H:%M %Z})",
        "",
        f"nginx 1 worker, TLS ({cipher}, P-256 certificate), {args.connections} keep-alive "
        f"connections, 1 thread/process per generator, closed loop, {args.duration} s per run, "
        f"{args.rounds} rounds (tool order rotated each round); medians over rounds; ratios = "
        f"CPU/request of the row ÷ that of wrk, formed within each round: median (min–max over "
        f"rounds). CPU = user+sys of the generator process (wait4 rusage); requests = those the "
        f"tool reports completed. "
        + ("nginx pinned to CPU %d, generator to CPU %d (taskset). " % (cpus[0], cpus[1])
           if pinned else "No CPU pinning. ") +
        f"Host: {cpu_model()}, {os.cpu_count()} CPUs, Linux {platform.release()}, "
        f"load average {load_start:.1f} at start and {os.getloadavg()[0]:.1f} at end; "
        f"run took {elapsed:.0f} s. hammer: {args.hammer_source} "
        f"(built {hammer_built:%Y-%m-%d %H:%M}).",
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
    summary = "\n".join(lines) + "\n"
    write_results(out_dir, "tls_engine", summary, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
