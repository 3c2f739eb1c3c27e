#!/usr/bin/env python3
"""Reducer benchmark: `hammer stats --reducer` against the seed's Ruby reducer and awk.

One input for everyone: N records (default 2,000,000) sorted by key, over K URLs (default 200),
1% failures, in hammer's record format (`KEY<TAB>0.012345`, `KEY<TAB>` for a failure), read from
stdin (page cache warm), output to a file. Per round every tool runs once, in an order that
rotates each round; ratios are formed inside a round, and the median over rounds is reported,
because the machine is shared and noisy.

  hammer stats --reducer     full per-key figures: sum, mean, min, max, errors, count, p50, p90,
                             p99, p99.9 from an HdrHistogram-compatible histogram, and that
                             histogram encoded (V2, compressed, base64)
  hammer stats --table       the same aggregation, printed as a table (no encoding)
  ruby stats_aggregator.rb   the seed's reducer (tests/fixtures/seed), verbatim: sum, average,
                             min (the last value), errors, count
  mawk / gawk                only sum and count per key:
                             awk -F'\\t' '{ if ($2 != "") { s[$1]+=$2; c[$1]++ } } END { ... }'

Measured per run: wall time (monotonic clock around the process) and CPU time (user+sys from
wait4 rusage); lines/s = input lines / wall seconds. All tools are single-threaded; --pin puts
them all on one CPU (taskset). Every tool's output is checked against the input's true per-key counts and
sums before its time counts.

Standard library only. Writes the raw runs and a summary under --out, prints the summary (and
copies it to $BENCH_SUMMARY_DIR for bench/run.sh).
Usage: bench/stats_reducer.py [--rounds 3] [--records 2000000] [--keys 200] [--hammer PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (REPO, Pinning, RunInfo, default_build_dir, default_hammer,  # noqa: E402
                      env_int, median, run_measured, snapshot_hammer, span, write_results)

SEED_REDUCER = os.path.join(REPO, "tests", "fixtures", "seed", "stats_aggregator.rb")
AWK_PROGRAM = '{ if ($2 != "") { s[$1]+=$2; c[$1]++ } } END { for (k in s) print k, s[k], c[k] }'
FORMAT_VERSION = 1  # bump when the generated input changes


# ---------------------------------------------------------------------------------------------
# Input


def generate(path: str, records: int, keys: int, failure_rate: float, seed: int) -> dict:
    """Writes the sorted records; returns the truth per key: [count, errors, sum_micros]."""
    rng = random.Random(seed)
    urls = sorted(f"http://10.0.{i // 250}.{i % 250 + 1}:8080/api/v1/items/{i:04d}?page={i % 7}"
                  f"&lang=en" for i in range(keys))
    truth = {}
    per_key, extra = divmod(records, keys)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for index, url in enumerate(urls):
            n = per_key + (1 if index < extra else 0)
            count = errors = total = 0
            lines = []
            for _ in range(n):
                if rng.random() < failure_rate:
                    lines.append(url + "\t\n")
                    errors += 1
                else:
                    micros = min(int(rng.lognormvariate(9.0, 0.9)), 59_999_999)
                    lines.append(f"{url}\t{micros // 1_000_000}.{micros % 1_000_000:06d}\n")
                    count += 1
                    total += micros
            f.write("".join(lines))
            truth[url] = [count, errors, total]
    os.replace(tmp, path)
    return truth


def input_file(out_dir: str, records: int, keys: int, failure_rate: float) -> tuple[str, dict]:
    name = f"records-v{FORMAT_VERSION}-{records}-{keys}-{failure_rate}"
    path = os.path.join(out_dir, name + ".tsv")
    truth_path = os.path.join(out_dir, name + ".truth.json")
    if os.path.exists(path) and os.path.exists(truth_path):
        with open(truth_path) as f:
            return path, json.load(f)
    print(f"# generating {records:,} records over {keys} keys -> {path}", file=sys.stderr)
    truth = generate(path, records, keys, failure_rate, seed=20261129)
    with open(truth_path, "w") as f:
        json.dump(truth, f)
    return path, truth


# ---------------------------------------------------------------------------------------------
# Output checks: each tool's per-key figures must match the input's truth.


def check_hammer(out: str, truth: dict) -> None:
    seen = {}
    for line in out.splitlines():
        f = line.split("\t")
        seen[f[0]] = (int(f[6]), int(f[5]), round(float(f[1]) * 1e6))
    want = {k: (c, e, s) for k, (c, e, s) in truth.items()}
    if seen != want:
        raise ValueError("hammer's output does not match the input's figures")


def check_table(out: str, truth: dict) -> None:
    total = next(line for line in out.splitlines() if line.startswith("TOTAL")).split()
    want = (sum(c for c, _, _ in truth.values()), sum(e for _, e, _ in truth.values()))
    if (int(total[2]), int(total[3])) != want:  # TOTAL requests ok errors ...
        raise ValueError("hammer's table does not match the input's totals")


def check_ruby(out: str, truth: dict) -> None:
    seen = {}
    for line in out.splitlines():
        f = line.split("\t")
        seen[f[0]] = (int(f[6]), int(f[5]), float(f[1]))
    if set(seen) != set(truth):
        raise ValueError("the Ruby reducer's keys do not match the input's")
    for key, (count, errors, total) in truth.items():
        c, e, s = seen[key]
        if (c, e) != (count, errors) or abs(s - total / 1e6) > 1e-6 * max(1.0, total / 1e6):
            raise ValueError(f"the Ruby reducer's figures for {key} do not match")


def check_awk(out: str, truth: dict) -> None:
    seen = {}
    for line in out.splitlines():
        key, total, count = line.rsplit(" ", 2)
        seen[key] = (int(count), float(total))
    if set(seen) != {k for k, (c, _, _) in truth.items() if c > 0}:
        raise ValueError("awk's keys do not match the input's")
    for key, (c, s) in seen.items():
        count, _, total = truth[key]
        # awk prints with OFMT "%.6g": six significant digits.
        if c != count or abs(s - total / 1e6) > 1e-5 * total / 1e6:
            raise ValueError(f"awk's figures for {key} do not match")


# ---------------------------------------------------------------------------------------------
# Runs


class Tool:
    def __init__(self, name, argv, check, note=""):
        self.name = name
        self.argv = argv
        self.check = check
        self.note = note


def run_tool(tool: Tool, pin: list[str], path: str, tmp: str, timeout: float) -> dict:
    """One run reading PATH on stdin: wall time and user+sys CPU (wait4), and its output."""
    out_path = os.path.join(tmp, "out.txt")
    err_path = os.path.join(tmp, "err.txt")
    with open(path, "rb") as stdin, open(out_path, "wb") as out, open(err_path, "wb") as err:
        rc, wall, ru = run_measured(pin + tool.argv, timeout, stdin=stdin, stdout=out, stderr=err)
    with open(out_path) as f:
        output = f.read()
    if rc != 0:
        with open(err_path) as f:
            raise RuntimeError(f"{tool.name} exited {rc}: {f.read()[-500:]}")
    return {"tool": tool.name, "wall": wall, "user": ru.ru_utime, "sys": ru.ru_stime,
            "cpu": ru.ru_utime + ru.ru_stime, "output": output}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=env_int("BENCH_ROUNDS", 3))
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--keys", type=int, default=200)
    ap.add_argument("--failure-rate", type=float, default=0.01)
    ap.add_argument("--hammer", default=default_hammer())
    ap.add_argument("--build-dir", default=default_build_dir())
    ap.add_argument("--out", default=None, help="results dir (default BUILD_DIR/stats_reducer)")
    ap.add_argument("--pin", action="store_true",
                    help="pin every tool to the last CPU (taskset); off by default: on a shared "
                         "machine a fixed CPU makes the tools queue behind other tenants")
    ap.add_argument("--only", default="", help="comma list of substrings of tool names")
    args = ap.parse_args()
    out_dir = args.out or os.path.join(args.build_dir, "stats_reducer")
    os.makedirs(out_dir, exist_ok=True)
    hammer_source = os.path.relpath(args.hammer, REPO)
    hammer = snapshot_hammer(args.hammer, args.build_dir, "hammer-under-test-stats", "stats")
    path, truth = input_file(out_dir, args.records, args.keys, args.failure_rate)
    lines = args.records
    size_mb = os.path.getsize(path) / 1e6

    tools = [Tool("hammer stats --reducer", [hammer, "stats", "--reducer"],
                  lambda out: check_hammer(out, truth),
                  note="full figures and an encoded histogram per key"),
             Tool("hammer stats --table", [hammer, "stats", "--table"],
                  lambda out: check_table(out, truth),
                  note="the same aggregation (histograms, percentiles), printed as a table: "
                       "no histogram encoding (deflate), which is about 40% of --reducer's CPU "
                       "time with 200 keys")]
    if shutil.which("ruby"):
        tools.append(Tool("seed Ruby reducer", ["ruby", SEED_REDUCER, "--reducer"],
                          lambda out: check_ruby(out, truth),
                          note=f"ruby {subprocess.run(['ruby', '-e', 'print RUBY_VERSION'], capture_output=True, text=True).stdout}, "
                               "tests/fixtures/seed/stats_aggregator.rb --reducer"))
    for awk in ("mawk", "gawk"):
        if shutil.which(awk):
            tools.append(Tool(awk, [awk, "-F\t", AWK_PROGRAM], lambda out: check_awk(out, truth),
                              note="sum and count only"))
    if args.only:
        keep = [s.strip() for s in args.only.split(",")]
        tools = [t for t in tools if any(k in t.name for k in keep)]

    pins = Pinning(args.pin)
    pin = pins.last()
    tmp = tempfile.mkdtemp(prefix="hammer-bench-stats-")
    info = RunInfo()
    print(f"# stats_reducer: {lines:,} lines ({size_mb:.0f} MB), {args.keys} keys, "
          f"{args.rounds} rounds, {len(tools)} tools"
          f"{', pinned to CPU %d' % pins.last_cpu if pins.enabled else ''}", file=sys.stderr)
    with open(path, "rb") as f:  # warm the page cache
        while f.read(1 << 24):
            pass

    runs = []
    broken: dict[str, str] = {}
    with open(os.path.join(out_dir, "raw.tsv"), "w") as raw:
        raw.write("round\ttool\twall\tuser\tsys\n")
        for rnd in range(args.rounds):
            k = rnd % len(tools)
            for t in tools[k:] + tools[:k]:
                if t.name in broken:
                    continue
                try:
                    r = run_tool(t, pin, path, tmp, timeout=600)
                    t.check(r.pop("output"))
                except (RuntimeError, ValueError, OSError, IndexError) as e:
                    broken[t.name] = str(e).strip().splitlines()[0][:200] if str(e) else "?"
                    print(f"  {t.name}: FAILED, dropped: {e}", file=sys.stderr)
                    continue
                r["round"] = rnd
                runs.append(r)
                raw.write(f"{rnd}\t{t.name}\t{r['wall']:.4f}\t{r['user']:.4f}\t{r['sys']:.4f}\n")
                raw.flush()
                print(f"  round {rnd + 1}/{args.rounds} {t.name:<24} {r['wall']:7.2f} s wall "
                      f"{r['cpu']:7.2f} s CPU {lines / r['wall']:>12,.0f} lines/s", file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)

    by_round = {}
    for r in runs:
        by_round.setdefault(r["round"], {})[r["tool"]] = r
    refs = [n for n in ("seed Ruby reducer", "mawk", "gawk") if any(r["tool"] == n for r in runs)]
    rows = []
    for t in tools:
        mine = [r for r in runs if r["tool"] == t.name]
        if not mine:
            continue
        row = {"tool": t.name, "lines_s": median([lines / r["wall"] for r in mine]),
               "wall": median([r["wall"] for r in mine]), "cpu": median([r["cpu"] for r in mine]),
               "ratios": {}}
        for ref in refs:
            # Speed-up of this row over `ref`: ref's wall time / this row's, within each round.
            ratios = [rs[ref]["wall"] / rs[t.name]["wall"] for rs in by_round.values()
                      if t.name in rs and ref in rs]
            cpu_ratios = [rs[ref]["cpu"] / rs[t.name]["cpu"] for rs in by_round.values()
                          if t.name in rs and ref in rs]
            row["ratios"][ref] = (ratios, median(cpu_ratios))
        rows.append(row)

    head = ["tool", "lines/s (wall)", "wall s", "CPU s"] + \
        [f"× {ref} (wall; CPU)" for ref in refs]
    table = ["| " + " | ".join(head) + " |",
             "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for row in rows:
        cells = [row["tool"], f"{row['lines_s']:,.0f}", f"{row['wall']:.3f}", f"{row['cpu']:.3f}"]
        for ref in refs:
            ratios, cpu = row["ratios"][ref]
            cells.append(f"{span(ratios)}; {cpu:.2f}")
        table.append("| " + " | ".join(cells) + " |")

    verdict = []
    hammer_row = next((r for r in rows if r["tool"].startswith("hammer")), None)
    if hammer_row:
        if "seed Ruby reducer" in hammer_row["ratios"]:
            m = median(hammer_row["ratios"]["seed Ruby reducer"][0])
            verdict.append(f"≥ 25× the seed's throughput: {'met' if m >= 25 else 'MISSED'} "
                           f"({m:.1f}×)")
        for awk in ("mawk", "gawk"):
            if awk in hammer_row["ratios"]:
                m = median(hammer_row["ratios"][awk][0])
                verdict.append(f"faster than {awk} (sum and count only): "
                               f"{'met' if m > 1 else 'MISSED'} ({m:.2f}×)")

    summary_lines = [
        f"## stats_reducer — `hammer stats --reducer` vs the seed's Ruby reducer and awk "
        f"({info.title_time()})",
        "",
        f"{lines:,} records sorted by key ({size_mb:.0f} MB), {args.keys} URLs, "
        f"{100 * args.failure_rate:g}% failures, hammer's 6-decimal format, on stdin from the "
        f"page cache; {args.rounds} rounds (order rotated each round); medians over rounds. "
        f"× ref = ref's time ÷ the row's time, formed within each round: wall median "
        f"(min–max over rounds); CPU median. Every output was checked against the input's "
        f"per-key counts and sums. "
        + (f"All tools pinned to CPU {pins.last_cpu} (taskset). " if pins.enabled
           else "No CPU pinning. ")
        + info.host(hammer_source),
        "",
        *table,
        "",
        *[f"- {t.name}: {t.note}" for t in tools if t.note],
        *[f"- {name}: run FAILED and was dropped ({why})" for name, why in broken.items()],
    ]
    if verdict:
        summary_lines += ["", "Goals: " + "; ".join(verdict) + "."]
    summary = "\n".join(summary_lines) + "\n"
    write_results(out_dir, "stats_reducer", summary, runs)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
