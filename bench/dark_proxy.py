#!/usr/bin/env python3
"""Dark-proxy benchmark: `hammer dark` vs nginx `proxy_pass` + `mirror`, multiplier 1.

Issue goal: proxy throughput and added p99 latency with forking at multiplier 1, side by side
with nginx proxy_pass + mirror on the same upstreams; hammer >= 1.0x nginx throughput and a
lower added p99.

Topology (all on 127.0.0.1):

    hammer load ──> proxy ──> regular upstream  (nginx, 1 worker, `return 200 "ok\\n"`)
                         └──> dark upstream     (nginx, 1 worker, same; every request copied once)

- Upstreams: two separate nginx instances (1 worker each, access_log off,
  keepalive_requests 1000000), not `hammer serve`: both proxies then talk to the same cheap,
  well-known server and we do not measure our own server on the far side. Two instances
  rather than two server blocks so that each has its own stub_status: the requests each
  upstream received (and the connections it accepted) are read before and after every run,
  which checks that both proxies really copy every request to the dark side.
- Proxy A: `hammer dark --threads 1 --regular-instances 1 --dark canary=URL
  --dark-multiplier canary=1` (Ns = Nd = 1, multiplier 1: every request copied exactly once).
- Proxy B: nginx, 1 worker, `mirror /mirror` + `proxy_pass http://reg` (`reg` and `dark` are
  nginx upstream blocks naming the 127.0.0.1 servers), upstream keepalive
  pools (64) on both sides, HTTP/1.1 upstream, access_log off.
- References: the generator straight to the regular upstream ("direct", the baseline of added
  latency); nginx `proxy_pass` without the mirror and `hammer dark` at multiplier 0 (the cost
  of proxying alone, and by difference the cost of the copy); both proxies
  on /empty, which the dark upstream answers 204 without a body. nginx's mirror subrequest is
  header-only, so nginx finalises it without reading the dark response body and cannot keep
  that connection alive: it opens one TCP connection per copy unless the dark response has no
  body. The /empty rows show the comparison without that handicap.
- TLS termination: `hammer dark --tls-cert/--tls-key` at multiplier 0 against nginx
  `proxy_pass` with `listen ... ssl` (TLS 1.2/1.3, the same P-256 certificate from a CA made
  for the run), both in front of the same plain-HTTP regular upstream; the generator speaks
  HTTPS with --cacert over its keep-alive connections, so the handshakes happen once per
  connection and the figure is dominated by TLS record work in the proxy. Their proxy CPU per
  request (closed loop) is compared like the other rows (issue goal: hammer <= 1.0x nginx).
- Isolation (bench/dark_isolation.py): `hammer dark` at multiplier 1 in front of a healthy
  dark cluster (the dark nginx) and of three broken ones (bench/dark_faults.py: accepts and
  never answers, never accepts, resets), each proxy a process of its own; the user's p99 and
  p99.9 in open loop (--isolation-rate, 2,000 req/s) and closed loop, divided by the healthy
  run's within a round, median of --isolation-rounds (3). Issue goal: within 1.2x (p99) and
  1.5x (p99.9).
- Generator: `hammer load` (1 thread) for every target. Phase 1, throughput: closed loop,
  -c 50, D seconds; requests/s, and the proxy process's CPU (utime+stime from /proc/PID/stat,
  all threads) per request. Phase 2, latency: open loop at a fixed rate (default: half of the
  slower proxy's median phase-1 throughput, rounded down to 500 req/s); p50/p99/p99.9
  counted from each request's due time (coordinated omission corrected), minus the direct
  baseline of the same round = added latency.
- Rounds: every phase runs all its targets once per round, the order rotating each round;
  ratios (hammer ÷ nginx) are formed within a round, then the median over rounds is reported.
- Pinning (2+ CPUs): the proxy under test alone on the last CPU; generator and both upstreams
  on the first. The host is shared (other tenants compile on both CPUs), so every process is
  started at nice -10, and since each runs in a session of its own (a scheduler autogroup with
  autogroups on), the autogroup gets nice -10 too; without that the pinned proxy got ~40 % of
  its CPU. The table gives the proxy's CPU use (its CPU time ÷ wall time) and how busy its CPU
  was: near 100 % use means the proxy was the bottleneck.

Standard library only (plus nginx with stub_status, and optionally strace). Raw runs and a
summary go under --out, the summary also to $BENCH_SUMMARY_DIR/dark_proxy.md. Runtime with the
defaults: about 7 minutes.
Usage: bench/dark_proxy.py [--rounds 5] [--duration 4] [--connections 50] [--rate auto|N]
                           [--nice -10] [--no-pin] [--strace-seconds 3]
                           [--isolation-rate 2000] [--isolation-rounds 3]
"""
from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (NGINX_HTTP_HEAD, REPO, Nginx, Pinning, RunInfo,  # noqa: E402
                      answers_ok, cpu_jiffies, default_build_dir, default_hammer, env_int,
                      http_get, make_certificates, median, parse_strace_counts,
                      proc_cpu_seconds, read_line, run_measured, snapshot_hammer, span, start,
                      untrack, usable_nice, write_results)
import dark_isolation  # noqa: E402

NICE = 0  # the autogroup nice of every process started (--nice)


# ---------------------------------------------------------------------------------------------
# nginx: upstreams and the mirroring proxy

UPSTREAM_CONF = NGINX_HTTP_HEAD + """\
  server {{
    listen 127.0.0.1:{port} backlog=4096;
    location = /__stub_status {{ stub_status; }}
    location / {{ return 200 "ok\\n"; }}
    {extra}
  }}
}}
"""
# The dark upstream also answers 204 (no body) on /empty: the one case where nginx's mirror can
# keep its dark connections alive (see the note in the summary).
DARK_EXTRA = "location = /empty { return 204; }"

MIRROR_CONF = NGINX_HTTP_HEAD + """\
  upstream reg {{ server 127.0.0.1:{reg}; keepalive 64; keepalive_requests 1000000; }}
  upstream dark {{ server 127.0.0.1:{dark}; keepalive 64; keepalive_requests 1000000; }}
  server {{
    listen 127.0.0.1:{port} backlog=4096;
    location / {{
      mirror /mirror;
      proxy_pass http://reg;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }}
    location = /mirror {{
      internal;
      proxy_pass http://dark$request_uri;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }}
  }}
}}
"""


# TLS termination: the same proxy_pass, the listener speaking TLS.
TLS_PLAIN_CONF = NGINX_HTTP_HEAD + """\
  upstream reg {{ server 127.0.0.1:{reg}; keepalive 64; keepalive_requests 1000000; }}
  server {{
    listen 127.0.0.1:{port} ssl backlog=4096;
    ssl_certificate {cert};
    ssl_certificate_key {key};
    ssl_protocols TLSv1.2 TLSv1.3;
    location / {{
      proxy_pass http://reg;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }}
  }}
}}
"""


# Reference only: the same proxy without the copy, to separate proxying from mirroring.
PLAIN_CONF = NGINX_HTTP_HEAD + """\
  upstream reg {{ server 127.0.0.1:{reg}; keepalive 64; keepalive_requests 1000000; }}
  server {{
    listen 127.0.0.1:{port} backlog=4096;
    location / {{
      proxy_pass http://reg;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }}
  }}
}}
"""


class Upstream(Nginx):
    """An nginx of the benchmark (upstream or proxy) in TMP/NAME, with the stub_status counters
    of the upstreams."""

    def __init__(self, name, tmp, pin, template, ca=None, **fmt):
        self.name = name
        super().__init__(os.path.join(tmp, name.replace(" ", "-")), template, pin=pin, ca=ca,
                         nice=NICE, **fmt)

    def counters(self) -> tuple[int, int]:
        """(connections accepted, requests handled) so far (stub_status), not counting the
        status requests (each on a connection of its own)."""
        status, body = http_get(self.port, "/__stub_status")
        m = re.search(rb"\n\s*(\d+)\s+(\d+)\s+(\d+)\s*\n", body)
        if status != 200 or not m:
            raise RuntimeError(f"{self.name}: bad stub_status answer {status}: {body!r}")
        self.status_reads = getattr(self, "status_reads", 0) + 1
        return int(m.group(1)) - self.status_reads, int(m.group(3)) - self.status_reads


class HammerDark:
    def __init__(self, hammer, reg_port, dark_port, pin, tmp, multiplier=1, name="hammer dark",
                 tls=None):
        """tls: (ca, cert, key) to terminate TLS on the listener."""
        self.name = name
        self.ca = tls[0] if tls else None
        self.scheme = "https" if tls else "http"
        self.log = os.path.join(tmp, re.sub(r"[^\w]+", "-", name) + ".err")
        argv = pin + [hammer, "dark", "--listen", "127.0.0.1:0",
                      "--upstream", f"http://127.0.0.1:{reg_port}",
                      "--dark", f"canary=http://127.0.0.1:{dark_port}",
                      "--regular-instances", "1", "--dark-multiplier", f"canary={multiplier}",
                      "--threads", "1", "--admin", "127.0.0.1:0"]
        if tls:
            argv += ["--tls-cert", tls[1], "--tls-key", tls[2]]
        self.argv = argv[len(pin):]
        self.proc = start(argv, nice=NICE, stdout=subprocess.PIPE, stderr=open(self.log, "w"),
                          stdin=subprocess.DEVNULL, text=True)
        lines = [read_line(self.proc), read_line(self.proc)]
        if not all(lines):
            with open(self.log) as f:
                sys.exit("hammer dark did not start:\n" + f.read())
        self.port = int(lines[0].rsplit(":", 1)[1])
        self.admin_port = int(lines[1].rsplit(":", 1)[1])
        self.worker = self.proc.pid  # taskset execs hammer: the process itself
        deadline = time.time() + 10
        while time.time() < deadline:
            self.cipher = answers_ok(self.port, self.ca)
            if self.cipher is not None:
                return
            time.sleep(0.1)
        sys.exit("hammer dark does not answer ok")

    def metrics(self) -> dict[str, int]:
        status, body = http_get(self.admin_port, "/metrics")
        out = {}
        for line in body.decode().splitlines():
            m = re.match(r'hammer_dark_(\w+)_total\{cluster="canary"\} (\d+)$', line)
            if m:
                out[m.group(1)] = int(m.group(2))
            m = re.match(r'hammer_dark_failed_total\{cluster="canary",type="(\w+)"\} (\d+)$', line)
            if m:
                out["failed"] = out.get("failed", 0) + int(m.group(2))
        return out


# ---------------------------------------------------------------------------------------------
# One measured run of the generator against one target.


def run_load(args, target, tmp, gen_pin, reg, dark, rate=None, duration=None,
             wrap=None) -> dict:
    port = target.port
    urls = os.path.join(tmp, f"urls-{port}.txt")
    scheme = getattr(target, "scheme", "http")
    with open(urls, "w") as f:
        f.write(f"{scheme}://127.0.0.1:{port}{getattr(target, 'path', '/')}\n")
    hjson = os.path.join(tmp, "load.json")
    if os.path.exists(hjson):
        os.unlink(hjson)
    d = duration or args.duration
    argv = [args.hammer, "load", urls, "--loop", "-d", f"{d}s", "-c", str(args.connections),
            "-t", "1", "--no-table", "-q", "--summary-json", hjson, "--emit", "none",
            "--no-error-pattern"]
    if rate:
        argv += ["--rate", str(rate)]
    if getattr(target, "ca", None):
        argv += ["--cacert", target.ca]
    reg_before, dark_before = reg.counters(), dark.counters()
    metrics = getattr(target, "metrics", None)
    hm_before = metrics() if metrics else None
    cpu_pids = {"proxy": target.worker, "reg": reg.worker,
                "dark": dark.worker}
    cpu_before = {k: proc_cpu_seconds(v) for k, v in cpu_pids.items() if v}
    side = wrap(target) if wrap else None
    jiffies_before = cpu_jiffies()
    err_path = os.path.join(tmp, "load.err")
    with open(err_path, "w") as err:
        returncode, wall, ru = run_measured(gen_pin + argv, d + 30, nice=NICE,
                                            stdout=subprocess.DEVNULL, stderr=err,
                                            stdin=subprocess.DEVNULL)
    cpu_after = {k: proc_cpu_seconds(v) for k, v in cpu_pids.items() if v}
    jiffies_after = cpu_jiffies()
    if side:
        side()
    time.sleep(0.3)  # copies still in flight land
    reg_after, dark_after = reg.counters(), dark.counters()
    hm_after = metrics() if metrics else None
    if returncode not in (0, 3):
        with open(err_path) as f:
            raise RuntimeError(f"hammer load exited {returncode}: {f.read()[-1500:]}")
    with open(hjson) as f:
        s = json.load(f)
    r = {
        "target": target.name,
        "rate": rate or 0,
        "ok": int(s["succeeded"]), "failed": int(s["failed"]), "seconds": float(s["seconds"]),
        "dropped": int(s.get("dropped", 0)), "late": int(s.get("late", 0)),
        "p50_ms": s["latency"]["p50_us"] / 1000, "p99_ms": s["latency"]["p99_us"] / 1000,
        "p999_ms": s["latency"]["p99_9_us"] / 1000,
        "u_p50_ms": (s.get("uncorrected_latency") or s["latency"])["p50_us"] / 1000,
        "u_p99_ms": (s.get("uncorrected_latency") or s["latency"])["p99_us"] / 1000,
        "reg_received": reg_after[1] - reg_before[1],
        "dark_received": dark_after[1] - dark_before[1],
        "reg_accepted": reg_after[0] - reg_before[0],
        "dark_accepted": dark_after[0] - dark_before[0],
        "wall": wall, "gen_cpu": ru.ru_utime + ru.ru_stime,
    }
    for k in cpu_before:
        r[f"{k}_cpu"] = cpu_after[k] - cpu_before[k]
    for c, (busy, total) in jiffies_after.items():
        b0, t0_ = jiffies_before.get(c, (0, 0))
        r[f"cpu{c}_busy"] = (busy - b0) / max(total - t0_, 1)
    if hm_before is not None:
        r["hm"] = {k: hm_after.get(k, 0) - hm_before.get(k, 0) for k in hm_after}
    return r


def strace_attach(target, tmp):
    """Attaches strace -c -f to the proxy for the length of one run; returns a closer."""
    out = os.path.join(tmp, f"strace-{target.port}.txt")
    p = start(["strace", "-c", "-f", "-o", out, "-p", str(target.worker)],
              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)  # attached

    def close():
        os.kill(p.pid, signal.SIGINT)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        untrack(p)
    close.path = out
    return close


# ---------------------------------------------------------------------------------------------


class Via:
    """A proxy driven with another request path (e.g. /empty, which the dark side answers 204)."""

    def __init__(self, base, name, path):
        self.base, self.name, self.path = base, name, path
        self.port, self.worker = base.port, base.worker
        self.metrics = getattr(base, "metrics", None)


class Direct:
    """The generator straight to the regular upstream: the baseline of added latency."""

    def __init__(self, reg):
        self.name = "direct"
        self.port = reg.port
        self.worker = None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=env_int("BENCH_ROUNDS", 5))
    ap.add_argument("--duration", type=int, default=env_int("BENCH_DURATION", 4),
                    help="seconds per run (4 by default: 45 runs must fit in about 4 minutes)")
    ap.add_argument("--connections", type=int, default=50)
    ap.add_argument("--rate", default="auto",
                    help="open-loop rate of phase 2: N req/s, or auto (half the slower proxy)")
    ap.add_argument("--hammer", default=default_hammer())
    ap.add_argument("--build-dir", default=default_build_dir())
    ap.add_argument("--out", default=None, help="results dir (default BUILD_DIR/dark_proxy)")
    ap.add_argument("--no-pin", action="store_true", help="do not use taskset")
    ap.add_argument("--nice", type=int, default=-10,
                    help="nice value of every process started (needs root below 0; 0: off)")
    ap.add_argument("--strace-seconds", type=int, default=3,
                    help="length of the strace -c runs on each proxy (0: skip)")
    ap.add_argument("--isolation-rate", type=int, default=2000,
                    help="open-loop rate of the isolation rows (req/s)")
    ap.add_argument("--isolation-rounds", type=int, default=3,
                    help="rounds of the isolation rows (0: skip them)")
    args = ap.parse_args()
    out_dir = args.out or os.path.join(args.build_dir, "dark_proxy")
    os.makedirs(out_dir, exist_ok=True)
    hammer_source = os.path.relpath(args.hammer, REPO)
    args.hammer = snapshot_hammer(args.hammer, args.build_dir, "hammer-under-test-dark", "dark")
    if not shutil.which("nginx"):
        sys.exit("nginx is not installed")

    # Priority: the host is shared with compilers; without it the pinned proxy gets a
    # scheduler share rather than its CPU, and the figures measure the neighbours.
    global NICE
    NICE = args.nice = usable_nice(args.nice, "dark_proxy")
    prio = ["nice", "-n", str(args.nice)] if args.nice else []
    pins = Pinning(not args.no_pin)
    cpus = pins.cpus
    proxy_pin = prio + pins.last()
    rest_pin = prio + pins.first()

    tmp = tempfile.mkdtemp(prefix="hammer-bench-dark-")
    atexit.register(shutil.rmtree, tmp, True)
    reg = Upstream("regular", tmp, rest_pin, UPSTREAM_CONF, extra="")
    dark = Upstream("dark", tmp, rest_pin, UPSTREAM_CONF, extra=DARK_EXTRA)
    hd = HammerDark(args.hammer, reg.port, dark.port, proxy_pin, tmp)
    ng = Upstream("nginx mirror", tmp, proxy_pin, MIRROR_CONF, reg=reg.port, dark=dark.port)
    plain = Upstream("nginx proxy_pass, no copy", tmp, proxy_pin, PLAIN_CONF, reg=reg.port)
    hd0 = HammerDark(args.hammer, reg.port, dark.port, proxy_pin, tmp, multiplier=0,
                     name="hammer dark, multiplier 0 (no copy)")
    ca, cert, key = make_certificates(tmp)
    hdtls = HammerDark(args.hammer, reg.port, dark.port, proxy_pin, tmp, multiplier=0,
                       name="hammer dark, TLS, no copy", tls=(ca, cert, key))
    ngtls = Upstream("nginx proxy_pass, TLS, no copy", tmp, proxy_pin, TLS_PLAIN_CONF, ca=ca,
                  reg=reg.port, cert=cert, key=key)
    direct = Direct(reg)
    # Isolation: the same proxy in front of a healthy and of three broken dark clusters.
    iso = [HammerDark(args.hammer, reg.port, dark.port, proxy_pin, tmp,
                      name=dark_isolation.target_name(dark_isolation.HEALTHY))]
    if args.isolation_rounds > 0:
        for kind in dark_isolation.KINDS:
            port = dark_isolation.start_fault_server(kind, rest_pin, NICE)
            iso.append(HammerDark(args.hammer, reg.port, port, proxy_pin, tmp,
                                  name=dark_isolation.target_name(kind)))
    hd204 = Via(hd, "hammer dark, dark answers 204", "/empty")
    ng204 = Via(ng, "nginx mirror, dark answers 204", "/empty")
    phase_targets = {"max": [direct, hd, ng, plain, hd0, hd204, ng204, hdtls, ngtls],
                     "rate": [direct, hd, ng], "iso-open": iso, "iso-closed": iso}
    everyone = phase_targets["max"]

    info = RunInfo()
    placement = pins.describe("generator and both upstreams", "proxy")
    print(f"# dark_proxy: regular :{reg.port}, dark :{dark.port}, hammer dark :{hd.port}, "
          f"nginx mirror :{ng.port}, nginx plain :{plain.port} ({placement}, nice {args.nice}); "
          f"{args.connections} connections, {args.duration}s x {args.rounds} rounds x 2 phases",
          file=sys.stderr)

    # Warm-up: connections, page cache, CPU frequency.
    for t in (hd, ng, plain, hd0, hdtls, ngtls, *iso):
        run_load(args, t, tmp, rest_pin, reg, dark, duration=1)

    runs = []
    raw_path = os.path.join(out_dir, "raw.tsv")
    raw = open(raw_path, "w")
    cols = ["phase", "round", "target", "rate", "ok", "failed", "seconds", "p50_ms", "p99_ms",
            "p999_ms", "u_p50_ms", "u_p99_ms", "reg_received", "dark_received", "reg_accepted",
            "dark_accepted", "proxy_cpu", "reg_cpu", "dark_cpu", "gen_cpu", "wall", "late",
            "dropped"] + [f"cpu{c}_busy" for c in cpus]
    raw.write("\t".join(cols) + "\n")

    def rps(r):
        return r["ok"] / r["seconds"]

    def cpu_us(r):
        return 1e6 * r.get("proxy_cpu", float("nan")) / max(r["ok"], 1)

    def record(phase, rnd, r):
        r["phase"], r["round"] = phase, rnd
        runs.append(r)
        raw.write("\t".join(str(r.get(c, "")) for c in cols) + "\n")
        raw.flush()
        print(f"  {phase:<4} round {rnd + 1} {r['target']:<26} "
              f"{rps(r):>8.0f} req/s  p50 {r['p50_ms']:.3f} p99 {r['p99_ms']:.3f} ms  "
              f"proxy {cpu_us(r):5.1f} us/req ({100 * r.get('proxy_cpu', 0) / r['wall']:3.0f} %)"
              f"  reg {r['reg_received']} dark {r['dark_received']} failed {r['failed']}",
              file=sys.stderr)

    def run_phase(phase, rate, rounds=args.rounds):
        targets = phase_targets[phase]
        for rnd in range(rounds):
            k = rnd % len(targets)
            for t in targets[k:] + targets[:k]:  # rotate so no target always runs first
                record(phase, rnd, run_load(args, t, tmp, rest_pin, reg, dark, rate=rate))

    def med(phase, target, f):
        return median([f(r) for r in runs if r["phase"] == phase and r["target"] == target])

    # Phase 1: closed-loop throughput. Phase 2: open loop at a fixed rate, latency.
    run_phase("max", None)
    if args.rate == "auto":
        slower = min(med("max", hd.name, rps), med("max", ng.name, rps))
        rate = max(500, int(slower / 2 // 500 * 500))
    else:
        rate = int(args.rate)
    run_phase("rate", rate)
    # Isolation: open loop at --isolation-rate, then closed loop at full speed.
    run_phase("iso-open", args.isolation_rate, args.isolation_rounds)
    run_phase("iso-closed", None, args.isolation_rounds)

    # Syscalls per request of each proxy (strace -c -f attached for one closed-loop run).
    profile = []
    if args.strace_seconds > 0 and shutil.which("strace"):
        for t in (hd, ng, hdtls, ngtls):
            closer = {}

            def wrap(target, closer=closer):
                closer["f"] = strace_attach(target, tmp)
                return closer["f"]
            try:
                r = run_load(args, t, tmp, rest_pin, reg, dark, duration=args.strace_seconds,
                             wrap=wrap)
                counts = parse_strace_counts(closer["f"].path)
            except (RuntimeError, OSError) as e:
                profile.append(f"{t.name}: strace run failed: {e}")
                continue
            n = max(r["ok"], 1)
            top = sorted(counts.items(), key=lambda kv: -kv[1])[:8]
            profile.append(f"{t.name}: {sum(counts.values()) / n:.2f} syscalls per proxied "
                           f"request over {n} requests — " +
                           ", ".join(f"{k} {v / n:.2f}" for k, v in top))

    raw.close()

    # Per-round figures and ratios (formed inside a round), then medians over rounds.
    by = {}
    for r in runs:
        by.setdefault((r["phase"], r["round"]), {})[r["target"]] = r

    def per_round(phase, need, f):
        return [f(rs) for (ph, _), rs in sorted(by.items()) if ph == phase
                and all(n in rs for n in need)]

    def mine(phase, n):
        return [r for r in runs if r["phase"] == phase and r["target"] == n]

    H, N, H2, N2 = hd.name, ng.name, hd204.name, ng204.name
    T, NT = hdtls.name, ngtls.name
    reference = {H: N, N: N, H2: N2, N2: N2, hd0.name: plain.name, plain.name: plain.name,
                 T: NT, NT: NT}
    pcpu = cpus[-1]

    def ratio(n, f):
        ref = reference.get(n)
        if ref is None:
            return "–"
        return span(per_round("max", [n, ref], lambda rs: f(rs[n]) / f(rs[ref])), ".2f")

    table1 = ["| target (closed loop) | req/s | ÷ nginx | proxy CPU µs/req | "
              "÷ nginx | proxy CPU use "
              f"(CPU {pcpu} busy, all tenants) | upstreams' CPU µs/req | dark ÷ regular "
              "requests received | new dark connections per copy | failed |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for t in phase_targets["max"]:
        n = t.name
        mx = mine("max", n)
        if not mx:
            continue
        proxy = n != "direct"
        dark_total = sum(r["dark_received"] for r in mx)
        reg_total = sum(r["reg_received"] for r in mx)
        table1.append("| " + " | ".join([
            n, f"{median([rps(r) for r in mx]):,.0f}", ratio(n, rps),
            f"{median([cpu_us(r) for r in mx]):.1f}" if proxy else "–",
            ratio(n, cpu_us) if proxy else "–",
            (f"{100 * median([r['proxy_cpu'] / r['wall'] for r in mx]):.0f} % "
             f"({100 * median([r.get(f'cpu{pcpu}_busy', 0) for r in mx]):.0f} %)")
            if proxy else "–",
            f"{median([1e6 * (r['reg_cpu'] + r['dark_cpu']) / max(r['ok'], 1) for r in mx]):.1f}",
            f"{dark_total / max(reg_total, 1):.4f} ({dark_total:,})",
            (f"{sum(r['dark_accepted'] for r in mx) / dark_total:.3f}" if dark_total else "–"),
            str(sum(r["failed"] for r in mx)),
        ]) + " |")

    added = {(n, q): per_round("rate", ["direct", n],
                               lambda rs, n=n, q=q: 1000 * (rs[n][q] - rs["direct"][q]))
             for n in (H, N) for q in ("p50_ms", "p99_ms", "p999_ms")}
    table2 = [f"| target (open loop, {rate:,} req/s) | p50 ms | p99 ms | p99.9 ms | added p50 µs | "
              "added p99 µs | added p99.9 µs | proxy CPU µs/req | dark ÷ regular requests "
              "received | failed |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for t in phase_targets["rate"]:
        n = t.name
        rt = mine("rate", n)
        if not rt:
            continue
        proxy = n != "direct"
        dark_total = sum(r["dark_received"] for r in rt)
        reg_total = sum(r["reg_received"] for r in rt)
        table2.append("| " + " | ".join(
            [n] + [f"{median([r[q] for r in rt]):.3f}" for q in ("p50_ms", "p99_ms", "p999_ms")] +
            [span(added[(n, q)], ".0f") if proxy else "0"
             for q in ("p50_ms", "p99_ms", "p999_ms")] +
            [f"{median([cpu_us(r) for r in rt]):.1f}" if proxy else "–",
             f"{dark_total / max(reg_total, 1):.4f} ({dark_total:,})",
             str(sum(r["failed"] for r in rt))]) + " |")

    ratio_rps = per_round("max", [H, N], lambda rs: rps(rs[H]) / rps(rs[N]))
    ratio_rps204 = per_round("max", [H2, N2], lambda rs: rps(rs[H2]) / rps(rs[N2]))
    ratio_plain = per_round("max", [H, plain.name],
                            lambda rs: cpu_us(rs[H]) / cpu_us(rs[plain.name]))
    fork_cost = per_round("max", [H, hd0.name], lambda rs: cpu_us(rs[H]) - cpu_us(rs[hd0.name]))
    tls_cpu = per_round("max", [T, NT], lambda rs: cpu_us(rs[T]) / cpu_us(rs[NT]))
    tls_rps = per_round("max", [T, NT], lambda rs: rps(rs[T]) / rps(rs[NT]))
    tls_cost = {n: per_round("max", [n, base], lambda rs, n=n, base=base:
                             cpu_us(rs[n]) - cpu_us(rs[base]))
                for n, base in ((T, hd0.name), (NT, plain.name))}
    diff99 = per_round("rate", [H, N], lambda rs: 1000 * (rs[H]["p99_ms"] - rs[N]["p99_ms"]))
    diff50 = per_round("rate", [H, N], lambda rs: 1000 * (rs[H]["p50_ms"] - rs[N]["p50_ms"]))
    hm_runs = [r["hm"] for r in runs if "hm" in r]
    hm_tot = {k: sum(h.get(k, 0) for h in hm_runs) for k in
              ("sent", "succeeded", "dropped", "backed_off", "failed")}

    dn = (H, N, H2, N2, hd0.name, plain.name, T, NT)
    detail = ["| round | " + " | ".join(f"{n} req/s" for n in dn) +
              " | " + " | ".join(f"{n} p99 ms" for n in ("direct", H, N)) + " |",
              "|---:|" + "---:|" * (len(dn) + 3)]
    for rnd in range(args.rounds):
        m = by.get(("max", rnd), {})
        q = by.get(("rate", rnd), {})
        detail.append(f"| {rnd + 1} | " + " | ".join(
            f"{rps(m[n]):,.0f}" if n in m else "–" for n in dn) +
            " | " + " | ".join(f"{q[n]['p99_ms']:.3f}" if n in q else "–"
                               for n in ("direct", H, N)) + " |")

    lines = [
        f"## dark_proxy — hammer dark vs nginx proxy_pass + mirror, multiplier 1, and TLS "
        f"termination "
        f"({info.title_time()})",
        "",
        f"Upstreams: two nginx instances, 1 worker each, `return 200 \"ok\\n\"` (the dark one "
        f"also `return 204` on /empty). Proxies, 1 thread or worker each: `hammer dark` (Ns = "
        f"Nd = 1, multiplier 1) and nginx `mirror` + `proxy_pass` (upstream keepalive 64). "
        f"References: nginx `proxy_pass` without a copy, `hammer dark` at multiplier 0, and "
        f"both proxies on /empty. TLS termination: `hammer dark --tls-cert` at multiplier 0 "
        f"and nginx `proxy_pass` with `listen ssl`, the generator on HTTPS. "
        f"Generator: `hammer load`, 1 thread, {args.connections} connections. Phase 1: closed "
        f"loop, {args.duration} s per run. Phase 2: open loop at {rate:,} req/s, "
        f"{args.duration} s per run, latency counted from each request's due time; added "
        f"latency = proxy − direct within a round. {args.rounds} rounds per phase, order "
        f"rotated each round; medians over rounds (min to max); ratios formed within a round. "
        f"{placement} "
        + (f"Every process at nice {args.nice} (its own autogroup too). " if args.nice else "")
        + info.host(hammer_source),
        "",
        *table1,
        "",
        *table2,
        "",
        f"- **Throughput, hammer ÷ nginx mirror: {span(ratio_rps, '.2f')}** (goal ≥ 1.0). "
        f"When the dark side answers 204 (nginx can then keep its mirror connections alive): "
        f"{span(ratio_rps204, '.2f')}. hammer dark's CPU per request ÷ nginx proxy_pass "
        f"without any copy: {span(ratio_plain, '.2f')}; the copy costs hammer "
        f"{span(fork_cost, '.1f')} µs per request (multiplier 1 − multiplier 0).",
        f"- **TLS termination (no copy), hammer dark's CPU per request ÷ nginx proxy_pass: "
        f"{span(tls_cpu, '.2f')}** (goal ≤ 1.0); throughput {span(tls_rps, '.2f')}. "
        f"TLS adds {span(tls_cost[T], '.1f')} µs per request to hammer dark and "
        f"{span(tls_cost[NT], '.1f')} µs to nginx (the TLS row − the same proxy in plain "
        f"HTTP). Negotiated: hammer dark {hdtls.cipher}, nginx {ngtls.cipher}; the generator "
        f"(`hammer load --cacert`) keeps its {args.connections} connections, so handshakes are "
        f"{args.connections} per run.",
        "- ÷ nginx: hammer rows against the nginx row of the same kind, formed within a round "
        "(multiplier 1 against the mirror, /empty against the mirror on /empty, multiplier 0 "
        "against proxy_pass without a copy, TLS against proxy_pass with TLS).",
        f"- **Added p99 at {rate:,} req/s: hammer {span(added[(H, 'p99_ms')], '.0f')} µs, "
        f"nginx {span(added[(N, 'p99_ms')], '.0f')} µs**; hammer − nginx within a round: "
        f"p99 {span(diff99, '.0f')} µs (goal < 0), p50 {span(diff50, '.0f')} µs.",
        f"- hammer dark's own counters over all runs: sent {hm_tot['sent']:,}, succeeded "
        f"{hm_tot['succeeded']:,}, dropped {hm_tot['dropped']}, backed off "
        f"{hm_tot['backed_off']}, failed {hm_tot['failed']}.",
        *[f"- {x.name} error.log: {n} lines at level error or above" +
          (f", first: `{first[:200]}`" if n else "")
          for x in (reg, dark, ng, plain, ngtls) for n, first in [x.errors()]],
        "- Proxy CPU use = the proxy's CPU time ÷ wall time (100 % = saturated); the CPU's busy "
        "share counts every tenant. Upstreams' CPU = regular + dark nginx workers, per client "
        "request. Requests received and connections accepted come from the upstreams' "
        "stub_status.",
        "",
        *detail,
    ]
    if args.isolation_rounds > 0:
        iso_lines, _ = dark_isolation.report(runs, args.isolation_rate, args.connections,
                                             args.isolation_rounds)
        lines += ["", f"### Isolation: a broken dark cluster vs a healthy one (every request "
                      f"forked; open loop at {args.isolation_rate:,} req/s and closed loop at "
                      f"-c {args.connections}, {args.duration} s per run, "
                      f"{args.isolation_rounds} rounds)", "", *iso_lines]
    if profile:
        lines += ["", f"Syscalls per proxied request (`strace -c -f -p PROXY`, one "
                      f"{args.strace_seconds} s closed-loop run each; strace slows the run, the "
                      "counts per request are what matters):", ""]
        lines += [f"- {p}" for p in profile]
    summary = "\n".join(lines) + "\n"
    write_results(out_dir, "dark_proxy", summary, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
