#!/usr/bin/env python3
"""Soundness of `hammer dark`'s canary verdict: false failures of an identical canary, and how
often each injected fault is caught, over many independent runs. Not a timing benchmark.

Issue goal: over 50 runs with an identical canary the false-failure rate stays at or below 2 %;
with each injected fault the fault is caught in at least 95 % of runs after 2,000 requests.

One run (all on 127.0.0.1, every process new for the run):

    hammer load (N requests, open loop) ──> hammer dark --compare --compare-secondary ──> primary
                                                    │                             └─> secondary
                                                    └──> dark (the canary)

- primary, secondary and dark are `hammer serve --threads 1`; the requests are GET /json/K for
  K = 0..49, whose `updated_at` differs on every call (noise the secondary cancels).
- The canary is identical, or made faulty with `hammer serve`'s own flags:
    mutate   --mutate price=0.05   a changed JSON field in 5 % of responses (diff_rate)
    latency  --latency 5ms         5 ms added to every response (latency_increase)
    errors   --error-rate 0.02     2 % of responses are 500s (error_increase)
- The requests are sent open loop over D seconds (default 10 s: 200 req/s, a canary's pace;
  latency_increase needs a slowdown to persist over more than half of at least 10 of its 1 s
  intervals, so 2,000 requests in a fraction of a second could never show one and would be
  judged insufficient).
- The proxy uses the default rules (samples>=500, diff_rate<1%, error_increase<0.1%,
  latency_increase<10%+1ms, alpha 0.01, 1 s intervals). Once every copy has settled, the
  verdict is read from GET /hammer/dark/verdict: a run "fails" when the verdict is fail, and a
  fault is "caught" when it fails on the rule that judges that fault.
- Runs are independent (new processes each) and P of them run at once (default 4) to bound the
  wall time. Nothing is pinned or niced: the host is shared with other work, and the verdict
  must stay sound under that noise (a descheduled process makes one side slower for a while).

Raw runs go to build/bench/canary_verdict/runs.jsonl, the summary to stdout and to
$BENCH_SUMMARY_DIR/canary_verdict.md. Runtime with the defaults: about 5 minutes.
Usage: bench/canary_verdict.py [--identical-runs 50] [--fault-runs 30] [--requests 2000]
                               [--seconds 10] [--parallel 4]
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures
import datetime
import json
import os
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (REPO, default_build_dir, default_hammer, install_cleanup,  # noqa: E402
                      snapshot_hammer, start_hammer, stop, write_results)

OUT = os.path.join(default_build_dir(), "canary_verdict")

SCENARIOS = {
    # name: (dark `hammer serve` flags, the rule that must catch it, or None for identical)
    "identical": ([], None),
    "mutate": (["--mutate", "price=0.05"], "diff_rate<1%"),
    "latency": (["--latency", "5ms"], "latency_increase<10%+1ms"),
    "errors": (["--error-rate", "0.02"], "error_increase<0.1%"),
}


def get(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read().decode()


def settled_verdict(admin, requests, deadline_s=60):
    """The verdict once every forked request has been recorded (answered on both sides, or
    counted as never sent), polled with a deadline."""
    deadline = time.monotonic() + deadline_s
    while True:
        verdict = json.loads(get(f"http://{admin}/hammer/dark/verdict"))
        report = json.loads(get(f"http://{admin}/hammer/dark/report"))
        recorded = sum(e["pairs"] + e["unsent"] for e in report["endpoints"])
        if recorded >= requests or time.monotonic() > deadline:
            return verdict, recorded
        time.sleep(0.05)


def run_once(hammer, scenario, requests, seconds):
    dark_flags, _ = SCENARIOS[scenario]
    procs = []

    def serve(*flags):
        p, (bound,) = start_hammer([hammer, "serve", "--listen", "127.0.0.1:0", "--threads", "1",
                                    *flags])
        procs.append(p)
        return bound
    try:
        primary, secondary, dark = serve(), serve(), serve(*dark_flags)
        proxy, (address, admin) = start_hammer([
            hammer, "dark", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0",
            "--upstream", f"http://{primary}", "--dark", f"canary=http://{dark}",
            "--regular-instances", "1", "--compare", "--compare-secondary",
            f"http://{secondary}"], lines=2)
        procs.append(proxy)
        lines = "".join(f"http://{address}/json/{i % 50}\n" for i in range(requests))
        started = time.monotonic()
        subprocess.run([hammer, "load", "-", "--rate", str(requests / seconds), "-c", "50",
                        "--emit", "none", "-q"],
                       input=lines, text=True, check=True, stderr=subprocess.DEVNULL)
        verdict, recorded = settled_verdict(admin, requests)
        seconds = time.monotonic() - started
    finally:
        stop(*procs)
    cluster = verdict["clusters"][0]
    rules = {r["rule"]: r for r in cluster["overall"]["rules"]}
    latency = rules["latency_increase<10%+1ms"]
    return {
        "scenario": scenario,
        "verdict": cluster["verdict"],
        "deciding": sorted({d["rule"] for d in cluster["deciding"]}),
        "recorded": recorded,
        "seconds": round(seconds, 2),
        "diff_rate": rules["diff_rate<1%"].get("value"),
        "error_increase": rules["error_increase<0.1%"].get("value"),
        "error_p": rules["error_increase<0.1%"].get("p_value"),
        "latency_shift_us": latency.get("hodges_lehmann_us"),
        "latency_margin_us": latency.get("margin_us"),
        "latency_p": latency.get("p_value"),
        "mann_whitney_p": latency.get("mann_whitney_p"),
        "intervals": latency.get("intervals"),
        "intervals_slower": latency.get("intervals_slower"),
        "p50_ratio": latency.get("p50_ratio"),
        "p99_ratio": latency.get("p99_ratio"),
    }


def significant(p):
    return p is not None and p < 0.01


def median(values):
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--identical-runs", type=int, default=50)
    parser.add_argument("--fault-runs", type=int, default=30)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--parallel", type=int, default=4)
    args = parser.parse_args()
    os.makedirs(OUT, exist_ok=True)
    install_cleanup()  # here: the runs start their processes on the pool's threads
    hammer = snapshot_hammer(default_hammer(), OUT, "hammer", "dark")
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "?"
    plan = [("identical", args.identical_runs)] + [(s, args.fault_runs) for s in SCENARIOS
                                                  if s != "identical"]
    # Interleave the scenarios, so a busy spell of the host does not land on one scenario.
    order = []
    remaining = dict(plan)
    while any(remaining.values()):
        for scenario, _ in plan:
            if remaining[scenario]:
                order.append(scenario)
                remaining[scenario] -= 1
    runs = []
    started = time.monotonic()
    with open(os.path.join(OUT, "runs.jsonl"), "w") as raw, \
            concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
        futures = [pool.submit(run_once, hammer, s, args.requests, args.seconds) for s in order]
        for i, future in enumerate(concurrent.futures.as_completed(futures)):
            result = future.result()
            runs.append(result)
            raw.write(json.dumps(result) + "\n")
            raw.flush()
            print(f"[{i + 1}/{len(order)}] {result['scenario']}: {result['verdict']} "
                  f"{','.join(result['deciding'])} shift {result['latency_shift_us']} us, slower "
                  f"in {result['intervals_slower']} of {result['intervals']} intervals",
                  file=sys.stderr)
    elapsed = time.monotonic() - started

    lines = [
        "## Canary verdict: false failures and catch rates",
        "",
        f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, hammer {commit}, "
        f"`bench/run.sh canary_verdict`: {len(runs)} runs of {args.requests} requests "
        f"over {args.seconds:g} s each, {args.parallel} at a time, in {elapsed:.0f} s; default "
        f"rules, alpha 0.01.",
        "",
        "| canary | runs | pass | fail | insufficient | caught by its rule | goal | "
        "median latency shift (µs) | median p99 ratio | Mann-Whitney significant |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    met = True
    for scenario, (_, rule) in SCENARIOS.items():
        these = [r for r in runs if r["scenario"] == scenario]
        if not these:
            continue
        counts = collections.Counter(r["verdict"] for r in these)
        n = len(these)
        if rule is None:
            rate = counts["fail"] / n
            goal = f"false failures ≤ 2 %: **{rate:.0%}**, {'met' if rate <= 0.02 else 'NOT met'}"
            caught = "—"
            met &= rate <= 0.02
        else:
            hits = sum(1 for r in these if r["verdict"] == "fail" and rule in r["deciding"])
            rate = hits / n
            goal = f"caught ≥ 95 %: **{rate:.0%}**, {'met' if rate >= 0.95 else 'NOT met'}"
            caught = f"{hits}/{n} ({rule})"
            met &= rate >= 0.95
        lines.append(
            f"| {scenario} | {n} | {counts['pass']} | {counts['fail']} | "
            f"{counts['insufficient']} | {caught} | {goal} | "
            f"{median(r['latency_shift_us'] for r in these)} | "
            f"{median(r['p99_ratio'] for r in these):.2f} | "
            f"{sum(1 for r in these if significant(r['mann_whitney_p']))}/{n} |")
    false_rules = collections.Counter(rule for r in runs if r["scenario"] == "identical"
                                      for rule in r["deciding"])
    identical = [r for r in runs if r["scenario"] == "identical"] or [{}]
    # A rule that failed in a run whose canary has no fault of its kind is a false failure too
    # (a faulty canary is still equal on the other rules): counted over every run.
    off_target = collections.Counter()
    for rule in (rule for _, rule in SCENARIOS.values() if rule):
        equal_on_it = [r for r in runs if SCENARIOS[r["scenario"]][1] != rule]
        off_target[rule] = (sum(1 for r in equal_on_it if rule in r["deciding"]), len(equal_on_it))
    lines += ["", f"Identical canary: failing rules {dict(false_rules) or 'none'}; max latency "
                  f"shift {max((r.get('latency_shift_us') or 0) for r in identical)} µs; "
                  f"max p99 ratio {max((r.get('p99_ratio') or 0) for r in identical):.2f}.",
              "", "False failures per rule, over every run whose canary is equal on that rule: " +
                  "; ".join(f"{rule} {n}/{total}" for rule, (n, total) in off_target.items()) +
                  ".",
              "", f"Goals {'met' if met else 'NOT met'}. "
                  "Raw runs: build/bench/canary_verdict/runs.jsonl."]
    write_results(OUT, "canary_verdict", "\n".join(lines) + "\n")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
