"""The isolation rows of bench/dark_proxy.py: does a broken dark cluster reach the user?

`hammer dark` forks every request (multiplier 1, Ns = Nd = 1) to a dark cluster that is healthy
(the dark nginx) or broken in one of three ways (bench/dark_faults.py): it accepts and never
answers, it never accepts (a listening socket nobody accepts from), or it resets every
connection. Each proxy is a process of its own with the same flags, pinned like the others.
The generator measures the user's latency in open loop at a fixed rate (2,000 req/s by
default) and in closed loop at full speed; within a round each broken cluster's p99 and p99.9
are divided by the healthy run's, and the median over the rounds is reported. Goal:
p99 within 1.2x and p99.9 within 1.5x of the healthy dark cluster.

Standard library only."""
from __future__ import annotations

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import median, read_line, span, start  # noqa: E402

KINDS = {
    "black-hole": "accepts, never answers",
    "never-accepts": "never accepts",
    "reset": "resets every connection",
}
HEALTHY = "healthy"
P99_GOAL = 1.2
P999_GOAL = 1.5
FAULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dark_faults.py")


def start_fault_server(kind: str, pin: list[str], nice: int = 0) -> int:
    """Starts bench/dark_faults.py KIND (pinned with `pin`, its autogroup at NICE, killed when
    the benchmark exits) and returns its port."""
    p = start(pin + [sys.executable, FAULTS, kind], nice=nice, stdout=subprocess.PIPE,
              stdin=subprocess.DEVNULL, text=True)
    line = read_line(p)
    if not line.isdigit():
        sys.exit(f"dark fault server {kind} did not start")
    return int(line)


def target_name(kind: str) -> str:
    return f"hammer dark, dark cluster {kind}"


def report(runs: list[dict], rate: int, connections: int, rounds: int) -> tuple[list[str], bool]:
    """The markdown lines of the isolation table from the runs of phases "iso-open" and
    "iso-closed", and whether every row met the goal."""
    healthy = target_name(HEALTHY)
    by = {}
    for r in runs:
        if r["phase"] in ("iso-open", "iso-closed"):
            by.setdefault((r["phase"], r["round"]), {})[r["target"]] = r
    lines = [
        f"| dark cluster | loop | user p99 ms | ÷ healthy | user p99.9 ms | ÷ healthy | "
        f"req/s | failed | copies sent / dropped / failed |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    all_met = True
    for phase, loop in (("iso-open", f"open, {rate:,} req/s"),
                        ("iso-closed", f"closed, -c {connections}")):
        for kind in [HEALTHY, *KINDS]:
            name = target_name(kind)
            mine = [rs[name] for (ph, _), rs in sorted(by.items()) if ph == phase and name in rs]
            if not mine:
                continue
            paired = [rs for (ph, _), rs in sorted(by.items())
                      if ph == phase and name in rs and healthy in rs]
            r99 = [rs[name]["p99_ms"] / rs[healthy]["p99_ms"] for rs in paired]
            r999 = [rs[name]["p999_ms"] / rs[healthy]["p999_ms"] for rs in paired]
            met = kind == HEALTHY or (median(r99) <= P99_GOAL and median(r999) <= P999_GOAL)
            all_met = all_met and met
            hm = [r.get("hm", {}) for r in mine]
            copies = "/".join(f"{sum(h.get(k, 0) for h in hm):,}"
                              for k in ("sent", "dropped", "failed"))
            lines.append("| " + " | ".join([
                kind if kind == HEALTHY else f"{kind} ({KINDS[kind]})", loop,
                span([r["p99_ms"] for r in mine], ".3f"),
                "1" if kind == HEALTHY else span(r99, ".2f") + ("" if met else " **✗**"),
                span([r["p999_ms"] for r in mine], ".3f"),
                "1" if kind == HEALTHY else span(r999, ".2f"),
                f"{median([r['ok'] / r['seconds'] for r in mine]):,.0f}",
                str(sum(r["failed"] for r in mine)),
                copies,
            ]) + " |")
    lines += [
        "",
        f"- **Isolation: every broken dark cluster within {P99_GOAL}× p99 and {P999_GOAL}× "
        f"p99.9 of the healthy one: {'yes' if all_met else 'no'}** (medians over {rounds} "
        f"rounds of the ratio formed within a round; min to max in parentheses). Every request "
        f"is forked (multiplier 1); the dark side's default timeout (5 s) and in-flight budget "
        f"(256 copies) apply, so copies beyond the budget are dropped and counted.",
    ]
    return lines, all_met
