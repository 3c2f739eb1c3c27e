#!/usr/bin/env python3
"""Instances dying under load (issue 46, item 8): `hammer dark` against nginx as the proxy in
front of three `hammer serve` instances, one of which is killed (SIGKILL) every 5 s and
started again on its port 1 s later, for 60 s, at a fixed rate.

Both proxies get the same instances, one worker each, and comparable settings:
- hammer dark: its defaults (least-request, 2 retries within a 20 % budget, ejection after 3
  connect failures) with `--ejection-time 2s`;
- nginx: `max_fails=3 fail_timeout=2s` on each server, `proxy_next_upstream error timeout
  http_502 http_503` with `proxy_next_upstream_tries 3`, `proxy_connect_timeout 1s`, and
  keep-alive connections to the instances (`keepalive 64`).
`hammer load` sends GETs in open loop at `--rate` req/s (latency from each request's due time)
through each proxy in turn, once with the kills and once without (the baseline); each run's
error rate (requests the user saw fail), p99 and p99.9 are reported, and the p99 with kills is
divided by the same proxy's baseline p99 of the round. Medians over the rounds. Goals (the
issue's): fewer errors than nginx, and p99 within 1.2x of the run without failures.

    bench/dark_resilience.py [--rate 2000] [--seconds 60] [--rounds 1]

Standard library only; everything on 127.0.0.1."""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (NGINX_HTTP_HEAD, Nginx, RunInfo, answers_ok, default_build_dir,  # noqa: E402
                      default_hammer, env_int, free_port, median, snapshot_hammer, start,
                      start_hammer, stop, write_results)

KILL_EVERY = 5.0
DOWN_FOR = 1.0

NGINX_CONF = NGINX_HTTP_HEAD + """
  upstream instances {{
    server 127.0.0.1:{a} max_fails=3 fail_timeout=2s;
    server 127.0.0.1:{b} max_fails=3 fail_timeout=2s;
    server 127.0.0.1:{c} max_fails=3 fail_timeout=2s;
    keepalive 64;
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://instances;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_connect_timeout 1s;
      proxy_next_upstream error timeout http_502 http_503;
      proxy_next_upstream_tries 3;
    }}
  }}
}}
"""


class Instances:
    """Three `hammer serve` on fixed ports, each restartable on its port."""

    def __init__(self, hammer: str):
        self.hammer = hammer
        self.ports = [free_port() for _ in range(3)]
        self.procs = [self._start(port) for port in self.ports]

    def _start(self, port: int):
        for _attempt in range(50):  # the port may linger a moment after a kill
            try:
                p, _ = start_hammer([self.hammer, "serve", "--listen", f"127.0.0.1:{port}",
                                     "--threads", "1"])
                return p
            except RuntimeError:
                time.sleep(0.05)
        sys.exit(f"hammer serve could not start again on port {port}")

    def kill(self, i: int) -> None:
        os.killpg(self.procs[i].pid, signal.SIGKILL)
        self.procs[i].wait()

    def restart(self, i: int) -> None:
        self.procs[i] = self._start(self.ports[i])

    def stop(self) -> None:
        stop(*self.procs)


def chaos(instances: Instances, seconds: float, done: threading.Event, log: list) -> None:
    """Every KILL_EVERY s: SIGKILL the next instance, start it again DOWN_FOR s later."""
    t0 = time.monotonic()
    k = 0
    while True:
        at = t0 + KILL_EVERY * (k + 1)
        if at + DOWN_FOR > t0 + seconds or done.wait(max(0.0, at - time.monotonic())):
            return
        i = k % 3
        instances.kill(i)
        killed = time.monotonic()
        done.wait(DOWN_FOR)
        instances.restart(i)
        log.append((round(killed - t0, 2), i, round(time.monotonic() - killed, 2)))
        k += 1


def run_load(hammer: str, port: int, rate: int, seconds: int, out: str) -> dict:
    summary = out + ".json"
    with open(out + ".line", "w") as f:
        f.write(f"http://127.0.0.1:{port}/user\n")
    r = subprocess.run([hammer, "load", out + ".line", "--loop", "--rate", str(rate), "-d",
                        f"{seconds}s", "-c", "1000", "--emit", "none", "-q", "--summary-json",
                        summary, "--timeout", "10s"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"hammer load failed: {r.stderr}")
    with open(summary) as f:
        return json.load(f)


def figures(summary: dict) -> dict:
    latency = summary["latency"]
    return {"requests": summary["requests"], "failed": summary["failed"],
            "error_rate": summary["failed"] / max(1, summary["requests"]),
            "p99_ms": latency["p99_us"] / 1000, "p999_ms": latency["p99_9_us"] / 1000,
            "late": summary.get("late", 0), "dropped": summary.get("dropped", 0),
            "failures": {k: v for k, v in (summary.get("failures") or {}).items() if v}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hammer", default=default_hammer())
    parser.add_argument("--rate", type=int, default=2000)
    parser.add_argument("--seconds", type=int, default=env_int("BENCH_DURATION", 60))
    parser.add_argument("--rounds", type=int, default=env_int("BENCH_ROUNDS", 1))
    parser.add_argument("--out", default=os.path.join(default_build_dir(), "dark_resilience"))
    args = parser.parse_args()
    info = RunInfo()
    hammer = snapshot_hammer(args.hammer, args.out, "hammer", "dark")
    os.makedirs(args.out, exist_ok=True)
    runs = []
    for round_ in range(args.rounds):
        for proxy_name in ("nginx", "hammer dark"):
            for kills in (False, True):
                instances = Instances(hammer)
                a, b, c = instances.ports
                if proxy_name == "nginx":
                    nginx = Nginx(tempfile.mkdtemp(dir=args.out), NGINX_CONF, a=a, b=b, c=c)
                    proc, port = nginx.proc, nginx.port
                else:
                    proc, lines = start_hammer(
                        [hammer, "dark", "--listen", "127.0.0.1:0", "--threads", "1",
                         "--ejection-time", "2s", "--upstream",
                         ",".join(f"http://127.0.0.1:{p}" for p in (a, b, c))])
                    port = int(lines[0].rsplit(":", 1)[1])
                if answers_ok(port, path="/user") is None:
                    sys.exit(f"{proxy_name} does not answer on {port}")
                done, log = threading.Event(), []
                killer = threading.Thread(target=chaos,
                                          args=(instances, args.seconds, done, log))
                if kills:
                    killer.start()
                summary = run_load(hammer, port, args.rate, args.seconds,
                                   os.path.join(args.out, f"r{round_}-{proxy_name[:5]}-{kills}"))
                done.set()
                if kills:
                    killer.join()
                stop(proc)
                instances.stop()
                run = {"round": round_, "proxy": proxy_name, "kills": kills, "kill_log": log,
                       **figures(summary)}
                runs.append(run)
                print(json.dumps(run), flush=True)
    report(runs, args, info)


def report(runs: list[dict], args, info: RunInfo) -> str:
    def pick(proxy, kills, key):
        return [r[key] for r in runs if r["proxy"] == proxy and r["kills"] == kills]

    def ratio(proxy):
        xs = []
        for round_ in range(args.rounds):
            base = [r for r in runs if r["proxy"] == proxy and not r["kills"]
                    and r["round"] == round_]
            hit = [r for r in runs if r["proxy"] == proxy and r["kills"] and r["round"] == round_]
            if base and hit and base[0]["p99_ms"] > 0:
                xs.append(hit[0]["p99_ms"] / base[0]["p99_ms"])
        return median(xs) if xs else float("nan")

    lines = [
        f"# Instances killed under load, {info.title_time()}",
        "",
        f"Three `hammer serve` instances; one SIGKILLed every {KILL_EVERY:.0f} s and restarted "
        f"{DOWN_FOR:.0f} s later, for {args.seconds} s; `hammer load` open loop at {args.rate} "
        f"req/s through each proxy; medians of {args.rounds} round(s).",
        "",
        "| proxy | instances | requests | user-visible errors | error rate | p99 ms | p99.9 ms "
        "| p99 ÷ no kills |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for proxy in ("nginx", "hammer dark"):
        for kills in (False, True):
            lines.append(
                f"| {proxy} | {'one killed every 5 s' if kills else 'no failures'} "
                f"| {median(pick(proxy, kills, 'requests')):,.0f} "
                f"| {median(pick(proxy, kills, 'failed')):,.0f} "
                f"| {100 * median(pick(proxy, kills, 'error_rate')):.3f} % "
                f"| {median(pick(proxy, kills, 'p99_ms')):.2f} "
                f"| {median(pick(proxy, kills, 'p999_ms')):.2f} "
                f"| {ratio(proxy) if kills else 1:.2f} |")
    lines += ["", f"Command: `bench/dark_resilience.py --rate {args.rate} --seconds {args.seconds} "
              f"--rounds {args.rounds}`. {info.host(args.hammer)}", ""]
    summary = "\n".join(lines)
    write_results(args.out, "dark_resilience", summary, runs)
    return summary


if __name__ == "__main__":
    main()
