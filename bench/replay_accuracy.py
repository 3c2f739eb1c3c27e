#!/usr/bin/env python3
"""How exactly `hammer load --replay` keeps a recorded schedule (issue 47, item 4).

A synthetic recording is written first: about RATE requests a second for DURATION seconds
(default 20,000 req/s for 15 s; BENCH_DURATION overrides the seconds), bursty as real traffic
is: each second's rate drifts (a mean-reverting walk within +-30 %), and within it requests come in bursts
(Poisson burst starts, 1 + geometric(mean 3) requests each, 20 us apart), in the JSON-lines
format `hammer dark --capture` writes (`ts` in Unix microseconds, a `conn` per client). It is
replayed against `hammer serve` on 127.0.0.1 at each speed of SPEEDS (default 1 and 4; the
second asks 80,000 req/s, more than this machine holds, to show how the run says so).

Per second of the schedule at that speed, the entries due (the recording's counts, re-bucketed
at the speed: "recorded / speed") are compared with the entries hammer sent in that second
(--summary-json's replay.seconds[].sent, hammer's own clock at each send): a second passes when
they differ by at most 1 % or 2 requests. The inter-arrival distributions are compared by the
two-sample Kolmogorov-Smirnov statistic hammer reports (scheduled gaps vs achieved gaps, over
histograms with 0.1 % resolution). hammer serve's /_hammer/stats count must equal the entries
sent. A speed the machine cannot hold shows up as late entries, and the seconds behind.

    bench/replay_accuracy.py [--rate R] [--seconds S] [--speeds 1,4] [--out DIR]
"""
# bench-timeout: 600
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

BASE_TS_US = 1_796_666_400_000_000  # 2026-12-07T18:00:00Z
BURST_GAP_US = 20


def write_recording(path: str, rate: float, seconds: int, seed: int = 47) -> list[int]:
    """Writes the recording; returns its arrival times (us from the first)."""
    rng = random.Random(seed)
    times = []
    drift = 0.0
    for second in range(seconds):
        drift = min(1.0, max(-1.0, 0.7 * drift + rng.gauss(0, 0.4)))
        level = 1 + 0.3 * drift
        mean_burst = 4.0  # 1 + geometric with mean 3
        bursts_per_s = rate * level / mean_burst
        t = float(second * 1_000_000)
        end = (second + 1) * 1_000_000
        while True:
            t += rng.expovariate(bursts_per_s) * 1e6
            if t >= end:
                break
            size = 1
            while rng.random() < 0.75:
                size += 1
            for k in range(size):
                at = int(t) + k * BURST_GAP_US
                if at < end:
                    times.append(at)
    times.sort()
    with open(path, "w") as f:
        for i, at in enumerate(times):
            f.write(json.dumps({"method": "GET", "url": f"https://prod.example/item/{i % 5000}",
                                "ts": BASE_TS_US + at, "conn": i % 64},
                               separators=(",", ":")) + "\n")
    return times


def due_per_second(times: list[int], speed: float) -> list[int]:
    counts: list[int] = []
    for at in times:
        k = int(at / speed // 1_000_000)
        while len(counts) <= k:
            counts.append(0)
        counts[k] += 1
    return counts


def serve_count(port: int) -> int:
    status, body = benchlib.http_get(port, "/_hammer/stats")
    return json.loads(body)["requests"] if status == 200 else -1


def replay(hammer: str, recording: str, port: int, speed: float, tmp: str) -> dict:
    summary_path = os.path.join(tmp, f"summary-{speed:g}.json")
    before = serve_count(port)
    argv = [hammer, "load", "--targets-format", "jsonl", "--replay", "--speed", f"{speed:g}",
            "--base-url", f"http://127.0.0.1:{port}", "-c", "512", "--emit", "none", "-q",
            "--summary-json", summary_path, recording]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"hammer load exited {proc.returncode}: {proc.stderr[-2000:]}")
    with open(summary_path) as f:
        summary = json.load(f)
    summary["served"] = serve_count(port) - before
    return summary


def judge(times: list[int], speed: float, summary: dict) -> dict:
    due = due_per_second(times, speed)
    rows = summary["replay"]["seconds"]
    sent = [row["sent"] for row in rows] + [0] * max(0, len(due) - len(rows))
    passed = 0
    worst = 0.0
    for k, want in enumerate(due):
        got = sent[k]
        off = abs(got - want)
        if off <= max(2, 0.01 * want):
            passed += 1
        worst = max(worst, off / want if want else 0)
    behind = [(k, row["late"], row["max_behind_ms"]) for k, row in enumerate(rows)
              if row["late"] > 0]
    return {"speed": speed, "seconds": len(due), "passed": passed, "worst": worst,
            "entries": len(times), "sent": summary["requests"], "served": summary["served"],
            "late": summary["replay"]["late"], "max_behind_ms": summary["replay"]["max_behind_ms"],
            "ks": summary["replay"]["inter_arrival_ks"], "behind": behind,
            "rps": summary["rps"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=21500)
    parser.add_argument("--seconds", type=int, default=benchlib.env_int("BENCH_DURATION", 15))
    parser.add_argument("--speeds", default="1,4")
    parser.add_argument("--out", default=os.path.join(benchlib.default_build_dir(),
                                                      "replay_accuracy"))
    args = parser.parse_args()
    hammer = benchlib.default_hammer()
    info = benchlib.RunInfo()
    benchlib.install_cleanup()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        recording = os.path.join(tmp, "recording.jsonl")
        times = write_recording(recording, args.rate, args.seconds)
        serve, lines = benchlib.start_hammer([hammer, "serve", "--listen", "127.0.0.1:0",
                                              "--threads", "1"])
        port = int(lines[0].rsplit(":", 1)[1].split()[0].rstrip("/"))
        for speed in (float(s) for s in args.speeds.split(",")):
            results.append(judge(times, speed, replay(hammer, recording, port, speed, tmp)))
        benchlib.stop(serve)

    out = [f"## replay accuracy ({info.title_time()})", "",
           f"A bursty recording of {len(times)} requests over {args.seconds} s "
           f"({len(times) / args.seconds:.0f} req/s on average) replayed with `hammer load "
           f"--replay --speed X` against `hammer serve` (1 thread) on 127.0.0.1. A second of the "
           f"schedule passes when hammer sent within 1 % (or 2 requests) of the entries due in "
           f"it; KS is the two-sample Kolmogorov-Smirnov statistic of scheduled vs achieved "
           f"gaps between sends.", "",
           "| speed | asked req/s | seconds passed | worst second | sent / served | late "
           "(> 1 ms) | max behind | inter-arrival KS |",
           "|---|---|---|---|---|---|---|---|"]
    for r in results:
        out.append(f"| {r['speed']:g} | {len(times) * r['speed'] / args.seconds:.0f} | "
                   f"{r['passed']} of {r['seconds']} | {100 * r['worst']:.2f} % | "
                   f"{r['sent']} / {r['served']} | {r['late']} | {r['max_behind_ms']:.1f} ms | "
                   f"{r['ks']:.3f} |")
    for r in results:
        if r["behind"]:
            shown = ", ".join(f"s{k}: {n} late, {ms:.1f} ms" for k, n, ms in r["behind"][:8])
            more = f" and {len(r['behind']) - 8} more" if len(r["behind"]) > 8 else ""
            out.append(f"\nAt speed {r['speed']:g}, seconds behind: {shown}{more}.")
    out += ["", info.host(hammer), ""]
    benchlib.write_results(args.out, "replay_accuracy", "\n".join(out), results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
