#!/usr/bin/env python3
"""Soak: do `hammer serve` and `hammer dark` hold their memory, file descriptors and threads
flat under a long, high-rate load with connection churn and clients that abort?

Two phases, each --seconds long (600 by default; BENCH_DURATION overrides), all on 127.0.0.1:
  serve  `hammer serve --threads 2` alone under the load; the serve process is measured.
  dark   `hammer dark --threads 2 --compare` in front of a regular `hammer serve` upstream,
         forking every request (multiplier 1) to one dark cluster (another `hammer serve`);
         the dark process is measured (the two servers behind it are sampled too).
The load on the front process, for the whole phase:
  - `hammer load` in open loop at --rate req/s over a mix of paths (/, /json/N, /bytes/N,
    /delay/1), (1 - --close-share) of it on keep-alive connections and --close-share of it
    sent by a second `hammer load` with `Connection: close`, so a new connection is opened
    every 1 / --close-share requests on average (hammer load has no per-connection request
    limit of its own);
  - an aborting client (this script, one thread, --aborts per second): each connection ends
    early in one of the ways of ABORTS, closed with a FIN or a RST at random.
Every second the measured processes' VmRSS and Threads (/proc/PID/status) and open file
descriptors (entries of /proc/PID/fd) are sampled. The first --warmup seconds (60, or a third
of a shorter phase) are the warm-up: allocator arenas, connection pools and buffers reach
their working size. After it, the process is flat when
  - RSS: its growth over the second half of the time after warm-up, the median RSS over the
    last minute minus the median over the minute half-way between the end of warm-up and
    the end (windows of an eighth of that time when it is shorter than 8 minutes), is below
    RSS_GROWTH_BOUND. Medians, because the RSS of a busy process swings by megabytes with
    the buffers of the requests in flight. The second half, because the working set can
    still grow after a fixed warm-up: when the machine stalls, connections pile up to a new
    high (behind dark, its pooled upstream connections too) and the memory of their buffers
    stays with the allocator after they close; a leak grows with the traffic, so it shows in
    the second half as in the first. At the default length 2 MiB is under 4 bytes per
    request and 36 per new connection of that half, while the smallest heap block is 32
    bytes (glibc) and a connection's state far more, so a leak of anything per request or
    per connection crosses it. Also reported: the growth from the first minute after
    warm-up to the last, and the least-squares slope of RSS after warm-up;
  - threads: no sample after warm-up has more threads than the end of warm-up;
  - fds: under load the count moves with the connections open at that moment (bounded by
    the loads' in-flight caps, the aborter and, behind dark, its upstream connection pools),
    so it is judged once the load has stopped (3 s later): the process holds no socket in
    close-wait (a peer closed it and the process never did), and every fd it holds beyond
    its idle count before the load is matched by one the servers behind it hold beyond
    theirs (dark's pooled upstream connections, open at both ends; none for serve).

Usage: bench/soak.py [--seconds 600] [--rate 2000] [--close-share 0.1] [--aborts 20]
                     [--phases serve,dark] [--hammer PATH]
Standard library only.
"""
# bench-timeout: 1800
from __future__ import annotations

import argparse
import json
import os
import random
import re
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (RunInfo, default_build_dir, default_hammer, env_int,  # noqa: E402
                      http_get, install_cleanup, snapshot_hammer, start, start_hammer, stop,
                      write_results)

RSS_GROWTH_BOUND = 2048  # KiB, after warm-up
LOAD_CONCURRENCY = 64  # in-flight cap of each hammer load
THREADS = 2  # event-loop threads of the measured process


# ---------------------------------------------------------------------------------------------
# Sampling /proc.


def proc_sample(pid: int) -> tuple[int, int, int] | None:
    """(VmRSS KiB, open fds, threads) of PID, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            status = f.read()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    rss = int(re.search(r"^VmRSS:\s+(\d+) kB", status, re.M).group(1))
    threads = int(re.search(r"^Threads:\s+(\d+)", status, re.M).group(1))
    return rss, fds, threads


class Sampler:
    """Samples the named processes once a second on a thread of its own until stopped:
    samples[name] is a list of (seconds since start, rss KiB, fds, threads)."""

    def __init__(self, pids: dict[str, int]):
        self.pids = pids
        self.samples = {name: [] for name in pids}
        self.t0 = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        tick = 0
        while not self._stop.is_set():
            now = time.monotonic() - self.t0
            for name, pid in self.pids.items():
                s = proc_sample(pid)
                if s is not None:
                    self.samples[name].append((now, *s))
            # Next whole second; the ticks a stall of this machine skipped are not made up.
            tick = max(tick + 1, int(time.monotonic() - self.t0) + 1)
            self._stop.wait(max(0.0, self.t0 + tick - time.monotonic()))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


# ---------------------------------------------------------------------------------------------
# The aborting client.

ABORTS = {
    "connect": "connects and closes at once",
    "partial-head": "sends part of a request head, then closes",
    "before-answer": "sends GET /delay/20 whole and closes before the answer",
    "mid-answer": "reads 4 KiB of a 1 MiB answer, then closes",
    "partial-body": "sends a POST head announcing 64 KiB and 1 KiB of it, then closes",
}


def abort_once(port: int, kind: str, rst: bool) -> None:
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    try:
        if kind == "partial-head":
            s.sendall(b"GET /json/1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAcc")
        elif kind == "before-answer":
            s.sendall(b"GET /delay/20 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        elif kind == "mid-answer":
            s.sendall(b"GET /bytes/1048576 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            got = 0
            while got < 4096:
                chunk = s.recv(4096 - got)
                if not chunk:
                    break
                got += len(chunk)
        elif kind == "partial-body":
            s.sendall(b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 65536\r\n\r\n" +
                      b"x" * 1024)
        if rst:  # SO_LINGER 0: close() sends a RST instead of a FIN
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    finally:
        s.close()


class Aborter:
    """One thread opening RATE connections per second to 127.0.0.1:PORT (on schedule, never
    more), each ended early in a random way of ABORTS. counts[kind] and errors (connections
    that failed before the planned abort, e.g. refused) are read after stop()."""

    def __init__(self, port: int, rate: float, seed: int):
        self.port, self.rate = port, rate
        self.counts = {k: 0 for k in ABORTS}
        self.rst = 0
        self.errors = 0
        self._random = random.Random(seed)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        if self.rate <= 0:
            return
        t0, n = time.monotonic(), 0
        while not self._stop.is_set():
            kind = self._random.choice(list(ABORTS))
            rst = self._random.random() < 0.5
            try:
                abort_once(self.port, kind, rst)
                self.counts[kind] += 1
                self.rst += rst
            except OSError:
                self.errors += 1
            n += 1
            self._stop.wait(max(0.0, t0 + n / self.rate - time.monotonic()))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


# ---------------------------------------------------------------------------------------------
# The load.


def write_urls(path: str, port: int) -> None:
    """The path mix: mostly small answers, some JSON documents (compared field by field on the
    dark phase), some 16 KiB bodies and a few 1 ms delays."""
    paths = ["/"] * 4 + [f"/json/{i}" for i in range(1, 9)] + ["/bytes/16384"] * 2 + ["/delay/1"]
    with open(path, "w") as f:
        for p in paths:
            f.write(f"http://127.0.0.1:{port}{p}\n")


def start_loads(hammer, urls, rate, close_share, seconds, out, name):
    """The keep-alive and the Connection: close `hammer load`s: [(label, process, json path)]."""
    loads = []
    for label, share, extra in (("keep-alive", 1 - close_share, []),
                                ("Connection: close", close_share, ["-H", "Connection: close"])):
        r = rate * share
        if r <= 0:
            continue
        tag = "close" if extra else "keepalive"
        summary = os.path.join(out, f"{name}-load-{tag}.json")
        argv = [hammer, "load", urls, "--loop", "--rate", f"{r:g}", "-d", f"{seconds}s",
                "-c", str(LOAD_CONCURRENCY), "-t", "1", "--timeout", "5s", "--emit", "none",
                "--no-table", "--summary-json", summary, *extra]
        err = open(os.path.join(out, f"{name}-load-{tag}.err"), "w")
        loads.append((label, start(argv, stdout=subprocess.DEVNULL, stderr=err,
                                   stdin=subprocess.DEVNULL), summary))
    return loads


def load_summary(label: str, path: str) -> dict:
    with open(path) as f:
        s = json.load(f)
    return {"label": label, "requests": s["requests"], "succeeded": s["succeeded"],
            "failed": s["failed"], "failures": s.get("failures", {}), "rps": s["rps"],
            "target": s.get("target_rate", 0), "opened": s.get("connections_opened", 0),
            "reused": s.get("connections_reused", 0), "late": s.get("late_behind", 0),
            "dropped": s.get("dropped", 0), "p99_ms": s["latency"]["p99_us"] / 1000}


def dark_counters(admin_port: int) -> tuple[dict[str, int], dict[str, int]]:
    """From the proxy's /metrics: the copies to the canary cluster by outcome, and the client
    connections accepted and refused (hammer_dark_rejected_total by reason, those not zero)."""
    _, body = http_get(admin_port, "/metrics")
    copies, clients = {}, {}
    for line in body.decode().splitlines():
        m = re.match(r'hammer_dark_(\w+)_total\{cluster="canary"(?:,type="\w+")?\} (\d+)$', line)
        if m:
            copies[m.group(1)] = copies.get(m.group(1), 0) + int(m.group(2))
        m = re.match(r'hammer_dark_connections_accepted_total(?:\{\})? (\d+)$', line)
        if m:
            clients["accepted"] = int(m.group(1))
        m = re.match(r'hammer_dark_rejected_total\{reason="(\w+)"\} (\d+)$', line)
        if m and int(m.group(2)):
            clients[m.group(1)] = int(m.group(2))
    return copies, clients


# ---------------------------------------------------------------------------------------------
# Figures.


def slope_per_minute(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, value) points, per minute."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    sxx = sum((t - mx) ** 2 for t, _ in points)
    sxy = sum((t - mx) * (v - my) for t, v in points)
    return 60 * sxy / sxx if sxx else 0.0


TCP_STATES = {"01": "established", "06": "time-wait", "08": "close-wait", "0A": "listen"}


def socket_states(pid: int) -> dict[str, int]:
    """The TCP states of the sockets PID holds open (/proc/net/tcp and tcp6 joined with the
    socket inodes of /proc/PID/fd): e.g. {"established": 210, "listen": 2}. A socket in
    close-wait is one whose peer has closed and that the process never closed."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    states = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if fields[9] in inodes:
                        name = TCP_STATES.get(fields[3], fields[3])
                        states[name] = states.get(name, 0) + 1
        except OSError:
            pass
    return states


def rss_growth(after, start: float) -> float:
    """Median RSS of the last minute of AFTER (samples) minus that of the minute beginning at
    START, in KiB; windows of an eighth of AFTER's length when it is shorter than 8 minutes."""
    t1 = after[-1][0]
    window = min(60.0, (t1 - after[0][0]) / 8)
    first = [s[1] for s in after if start <= s[0] <= start + window]
    last = [s[1] for s in after if s[0] >= t1 - window]
    return statistics.median(last) - statistics.median(first)


def judge(samples, load_start: float, warmup: float, idle_before, idle_after,
          peers_leftover: int | None, states: dict[str, int]) -> dict:
    """The figures of one process: at the end of warm-up, at the end of the load, the maxima
    after warm-up, the RSS slope after warm-up, and whether each is flat. PEERS_LEFTOVER: the
    fds the servers behind it hold beyond their idle count once the load has stopped (its idle
    upstream connections seen from the other end; 0 with none), None for a process not
    judged."""
    under = [s for s in samples if s[0] >= load_start]
    warm = [s for s in under if s[0] < load_start + warmup]
    after = [s for s in under if s[0] >= load_start + warmup]
    if not warm or len(after) < 2 or idle_before is None or idle_after is None:
        raise RuntimeError("too few samples")
    w, e = warm[-1], after[-1]
    r = {
        "warm": w[1:], "end": e[1:],
        "max": tuple(max(s[i] for s in after) for i in (1, 2, 3)),
        "slope": slope_per_minute([(s[0], s[1]) for s in after]),
        "growth_all": rss_growth(after, after[0][0]),
        "growth": rss_growth(after, (after[0][0] + after[-1][0]) / 2),
        "idle_before": idle_before, "idle_after": idle_after, "states": states,
        "leftover": idle_after[1] - idle_before[1], "peers_leftover": peers_leftover,
        "judged": peers_leftover is not None,
    }
    r["rss_flat"] = r["growth"] < RSS_GROWTH_BOUND
    r["threads_flat"] = r["max"][2] <= w[3]
    r["fds_flat"] = (states.get("close-wait", 0) == 0 and
                     r["leftover"] == (peers_leftover or 0))
    return r


# ---------------------------------------------------------------------------------------------
# The phases.


def run_phase(name, hammer, args, out) -> dict:
    """Starts the servers of phase NAME, loads the front one for args.seconds, and returns its
    figures: per sampled process, the load summaries, the aborter's counts, the dark counters."""
    procs, front_port, admin_port = [], None, None
    serve = [hammer, "serve", "--listen", "127.0.0.1:0"]
    if name == "serve":
        p, (addr,) = start_hammer(serve + ["--threads", str(THREADS)])
        procs.append(("hammer serve", p))
        front_port = int(addr.rsplit(":", 1)[1])
        measured = "hammer serve"
    else:
        upstream, (up_addr,) = start_hammer(serve)
        canary, (dark_addr,) = start_hammer(serve)
        err = open(os.path.join(out, "dark.err"), "w")
        dark, (addr, admin) = start_hammer(
            [hammer, "dark", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0",
             "--threads", str(THREADS), "--upstream", f"http://{up_addr}",
             "--dark", f"canary=http://{dark_addr}", "--compare"], lines=2, stderr=err)
        procs += [("hammer dark", dark), ("regular hammer serve", upstream),
                  ("dark hammer serve", canary)]
        front_port = int(addr.rsplit(":", 1)[1])
        admin_port = int(admin.rsplit(":", 1)[1])
        measured = "hammer dark"
    pids = {label: p.pid for label, p in procs}
    try:
        urls = os.path.join(out, f"{name}-urls.txt")
        write_urls(urls, front_port)
        idle_before = {label: proc_sample(pid) for label, pid in pids.items()}
        sampler = Sampler(pids)
        load_start = time.monotonic() - sampler.t0
        loads = start_loads(hammer, urls, args.rate, args.close_share, args.seconds, out, name)
        aborter = Aborter(front_port, args.aborts, seed=args.seed)
        print(f"soak {name}: {args.seconds} s at {args.rate:g} req/s, "
              f"{args.close_share:.0%} with Connection: close, {args.aborts:g} aborts/s",
              file=sys.stderr)
        for _, p, _ in loads:
            p.wait(timeout=args.seconds + 120)
        load_end = time.monotonic() - sampler.t0
        aborter.stop()
        time.sleep(3)  # the last answers and closes
        idle_after = {label: proc_sample(pid) for label, pid in pids.items()}
        states = {label: socket_states(pid) for label, pid in pids.items()}
        sampler.stop()
        counters, clients = dark_counters(admin_port) if admin_port else ({}, {})
        summaries = []
        for label, p, path in loads:
            if p.returncode != 0 or not os.path.exists(path):
                raise RuntimeError(f"{name}: hammer load ({label}) exited {p.returncode}")
            summaries.append(load_summary(label, path))
        for label, p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"{name}: {label} exited {p.returncode} during the soak")
    finally:
        stop(*[p for _, p in procs])
    warmup = args.warmup if args.warmup is not None else min(60, args.seconds / 3)
    with open(os.path.join(out, f"{name}-samples.tsv"), "w") as f:
        f.write("process\tseconds\trss_kib\tfds\tthreads\n")
        for label, rows in sampler.samples.items():
            for t, rss, fds, threads in rows:
                f.write(f"{label}\t{t - load_start:.2f}\t{rss}\t{fds}\t{threads}\n")
    backends_leftover = sum(idle_after[label][1] - idle_before[label][1]
                            for label in pids if label != measured)
    figures = {label: judge(rows, load_start, warmup, idle_before[label], idle_after[label],
                            backends_leftover if label == measured else None, states[label])
               for label, rows in sampler.samples.items()}
    return {"name": name, "measured": measured, "figures": figures, "loads": summaries,
            "aborts": dict(aborter.counts), "abort_rst": aborter.rst,
            "abort_errors": aborter.errors, "counters": counters, "clients": clients,
            "warmup": warmup,
            "seconds": load_end - load_start}


# ---------------------------------------------------------------------------------------------
# The summary.


def mib(kib: float) -> str:
    return f"{kib / 1024:.1f}"


def report(phases: list[dict], args, info: RunInfo, hammer_source: str) -> str:
    lines = [
        f"## Soak: serve and dark under {args.seconds} s of load with connection churn and "
        f"aborting clients ({info.title_time()})",
        "",
        f"Per phase: `hammer load` open loop at {args.rate:,.0f} req/s in all "
        f"({1 - args.close_share:.0%} keep-alive, {args.close_share:.0%} `Connection: close`: "
        f"a new connection every {1 / args.close_share:.0f} requests on average), in-flight cap "
        f"{LOAD_CONCURRENCY} each, plus {args.aborts:g} aborted connections per second "
        f"({', '.join(ABORTS)}; half closed with a RST). Measured process: "
        f"`--threads {THREADS}`; sampled every second from /proc. Flat: RSS growth over the "
        f"second half after warm-up (median of the last minute − median of the minute half-way) "
        f"< {mib(RSS_GROWTH_BOUND)} MiB, no thread added after warm-up, and 3 s after the load no "
        f"socket in close-wait and no fd beyond the idle count other than pooled upstream "
        f"connections, matched by the servers behind (bench/soak.py).",
        "",
        "| phase | process | RSS MiB idle → warm → end (max) | "
        "RSS growth MiB, all / 2nd half | "
        "RSS slope KiB/min | "
        "fds idle → warm → end (max) → idle | sockets after | threads warm → end (max) | "
        "flat |",
        "|---|---|---:|---:|---:|---:|---|---:|---|",
    ]
    all_flat = True
    for ph in phases:
        for label, r in ph["figures"].items():
            flat = r["rss_flat"] and r["threads_flat"] and r["fds_flat"]
            measured = r["judged"]
            if measured:
                all_flat = all_flat and flat
            bad = [k for k in ("rss", "fds", "threads") if not r[f"{k}_flat"]]
            sockets = ", ".join(f"{k} {v}" for k, v in sorted(r["states"].items())) or "–"
            if measured and r["peers_leftover"]:
                sockets += f" ({r['peers_leftover']} held by the servers behind)"
            ib, ia = r["idle_before"], r["idle_after"]
            lines.append("| " + " | ".join([
                f"{ph['name']} ({ph['seconds']:.0f} s, warm-up {ph['warmup']:.0f} s)",
                f"**{label}**" if measured else label,
                f"{mib(ib[0])} → {mib(r['warm'][0])} → {mib(r['end'][0])} "
                f"({mib(r['max'][0])})",
                f"{r['growth_all'] / 1024:+.2f} / {r['growth'] / 1024:+.2f}",
                f"{r['slope']:+.1f}",
                f"{ib[1]} → {r['warm'][1]} → {r['end'][1]} ({r['max'][1]}) → "
                f"{ia[1]}",
                sockets,
                f"{r['warm'][2]} → {r['end'][2]} ({r['max'][2]})",
                ("yes" if flat else "**no: " + ", ".join(bad) + "**") if measured
                else "(not judged)",
            ]) + " |")
    lines += ["", "| phase | load | requests | req/s (target) | failed | failures by type | "
              "not sent (no free slot) | connections opened / reused | p99 ms |",
              "|---|---|---:|---:|---:|---|---:|---:|---:|"]
    for ph in phases:
        for s in ph["loads"]:
            failures = ", ".join(f"{k} {v:,}" for k, v in sorted(s["failures"].items())) or "–"
            lines.append(f"| {ph['name']} | {s['label']} | {s['requests']:,} | "
                         f"{s['rps']:,.0f} ({s['target']:,.0f}) | {s['failed']:,} | {failures} | "
                         f"{s['dropped']:,} | {s['opened']:,} / {s['reused']:,} | "
                         f"{s['p99_ms']:.1f} |")
    lines.append("")
    for ph in phases:
        aborts = ", ".join(f"{k} {v:,}" for k, v in ph["aborts"].items())
        lines.append(f"- {ph['name']}: aborted connections {sum(ph['aborts'].values()):,} "
                     f"({aborts}; {ph['abort_rst']:,} with a RST), "
                     f"{ph['abort_errors']:,} failed before their abort.")
        if ph["counters"]:
            c = ph["counters"]
            lines.append("  Dark copies to the canary: " + ", ".join(
                f"{k} {v:,}" for k, v in sorted(c.items())) + ".")
        if ph["clients"]:
            refused = ", ".join(f"{k} {v:,}" for k, v in ph["clients"].items()
                                if k != "accepted") or "none"
            lines.append(f"  Client connections to the proxy: accepted "
                         f"{ph['clients'].get('accepted', 0):,}; refused by reason: {refused}.")
    lines += [
        "",
        f"- **Every measured process flat: {'yes' if all_flat else 'no'}.** Other tenants "
        "share the machine: they lower the rate achieved (the loads' req/s against their "
        "target), not what flatness measures.",
        "",
        info.host(hammer_source),
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=env_int("BENCH_DURATION", 600),
                        help="length of each phase")
    parser.add_argument("--warmup", type=float, default=None,
                        help="seconds of warm-up (default: 60, or a third of a shorter phase)")
    parser.add_argument("--rate", type=float, default=2000, help="requests per second in all")
    parser.add_argument("--close-share", type=float, default=0.1,
                        help="share of the rate sent with Connection: close")
    parser.add_argument("--aborts", type=float, default=20, help="aborted connections per second")
    parser.add_argument("--phases", default="serve,dark")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hammer", default=default_hammer())
    args = parser.parse_args()
    if not 0 < args.close_share <= 1:
        sys.exit("--close-share must be in (0, 1]")
    install_cleanup()
    info = RunInfo()
    out = os.path.join(default_build_dir(), "soak")
    os.makedirs(out, exist_ok=True)
    hammer = snapshot_hammer(args.hammer, out, "hammer", "dark")
    phases = [run_phase(name, hammer, args, out) for name in args.phases.split(",")]
    summary = report(phases, args, info, args.hammer)
    write_results(out, "soak", summary, runs=phases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
