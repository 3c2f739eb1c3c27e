#!/usr/bin/env python3
"""Capture benchmark: what `hammer dark --capture` costs the proxy, in CPU per request.

Issue 47 goal: dark CPU per request with capture on (--capture-rate 1, request bodies up to
4 KiB) at most 1.15x capture off. Also the compressed size of a captured request
(--capture-compress zstd).

Topology (all on 127.0.0.1): `hammer load` (1 thread, closed loop, -c 32) ──> `hammer dark
--threads 1` ──> `hammer serve --threads 1`. The requests come from a JSON-lines request file of
64 entries, replayed in a loop: GETs and POSTs/PUTs of a browser-like head (User-Agent, Accept,
Cookie, Authorization: the redacted ones too) with JSON bodies of 0 to 4 KiB that do not repeat
one another.

Modes, one proxy process each, in every round (order rotating): off (no --capture), on
(--capture FILE.jsonl) and zstd (--capture FILE.jsonl.zst). CPU is the proxy process's utime +
stime from /proc/PID/stat (every thread: its event loop and the capture writer) over the run,
divided by the requests answered; the ratios on ÷ off and zstd ÷ off are formed within a round.
Bytes per request: hammer_dark_capture_bytes_total ÷ hammer_dark_capture_lines_total.

Pinning (2+ CPUs): the proxy on the last CPU, the generator and the upstream on the first, all
at nice -10 (their autogroups too), as in bench/dark_proxy.py.

Standard library only. Raw runs and a summary go under --out, the summary also to
$BENCH_SUMMARY_DIR/dark_capture.md. Runtime with the defaults: about 1 minute.
"""
# bench-timeout: 900
import argparse
import base64
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

from benchlib import (Pinning, RunInfo, default_build_dir, default_hammer, env_int, http_get,
                      median, proc_cpu_seconds, round_ratio, run_measured, span, start_hammer,
                      stop, usable_nice, write_results)

MODES = ("off", "on", "zstd")


def request_file(path: str, port: int, count: int = 64) -> None:
    """COUNT JSON-lines entries for the proxy at PORT: bodies of 0 to 4 KiB, each different."""
    rng = random.Random(47)
    words = ["alpha", "beta", "gamma", "delta", "user", "order", "item", "price", "name",
             "status", "created", "updated", "id", "tags", "note", "ok", "true", "false"]
    with open(path, "w") as f:
        for i in range(count):
            size = rng.randrange(0, 4097)
            body = {}
            while len(json.dumps(body)) < size:
                body[f"{rng.choice(words)}_{rng.randrange(1000)}"] = (
                    rng.choice(words) + " " + str(rng.randrange(10 ** 9)))
            text = json.dumps(body)[:size] if size else ""
            method = "GET" if not text else rng.choice(["POST", "PUT"])
            header = {"User-Agent": ["Mozilla/5.0 (X11; Linux x86_64) bench/1.0"],
                      "Accept": ["application/json"], "Accept-Language": ["en-GB,en;q=0.9"],
                      "Cookie": [f"session={rng.randrange(10 ** 12)}; theme=dark"],
                      "Authorization": [f"Bearer {rng.randrange(10 ** 15)}"]}
            entry = {"method": method,
                     "url": f"http://127.0.0.1:{port}/api/v1/items/{i}?page={i % 7}&token=t{i}",
                     "header": header}
            if text:
                header["Content-Type"] = ["application/json"]
                entry["body"] = base64.b64encode(text.encode()).decode()
            f.write(json.dumps(entry) + "\n")


def capture_metrics(admin: str) -> dict[str, int]:
    _, port = admin.rsplit(":", 1)
    _, body = http_get(int(port), "/metrics")
    out = {}
    for line in body.decode().splitlines():
        m = re.match(r"hammer_dark_capture_(lines|bytes)_total (\d+)$", line)
        if m:
            out[m.group(1)] = int(m.group(2))
        m = re.match(r'hammer_dark_capture_dropped_total\{reason="\w+"\} (\d+)$', line)
        if m:
            out["dropped"] = out.get("dropped", 0) + int(m.group(1))
    return out


def run_mode(args, mode, tmp, pin, upstream, nice) -> dict:
    capture_dir = os.path.join(tmp, f"capture-{mode}")
    shutil.rmtree(capture_dir, ignore_errors=True)
    os.makedirs(capture_dir)
    argv = [args.hammer, "dark", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0",
            "--upstream", f"http://{upstream}", "--threads", "1"]
    if mode != "off":
        name = "traffic.jsonl.zst" if mode == "zstd" else "traffic.jsonl"
        argv += ["--capture", os.path.join(capture_dir, name)]
    dark, (address, admin) = start_hammer(pin.last() + argv, lines=2, nice=nice)
    port = int(address.rsplit(":", 1)[1])
    requests = os.path.join(tmp, f"requests-{port}.jsonl")
    request_file(requests, port)
    summary = os.path.join(tmp, "load.json")
    load = [args.hammer, "load", "--targets-format", "jsonl", "--loop", "-d",
            f"{args.duration}s", "-c", str(args.connections), "-t", "1", "--no-table", "-q",
            "--summary-json", summary, "--emit", "none", requests]
    cpu_before = proc_cpu_seconds(dark.pid)
    code, wall, _ = run_measured(pin.first() + load, args.duration + 30, nice=nice,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 stdin=subprocess.DEVNULL)
    if code not in (0, 3):
        stop(dark)
        raise RuntimeError(f"hammer load exited {code} ({mode})")
    with open(summary) as f:
        s = json.load(f)
    # The writer may still be encoding what was queued: its CPU counts once every answered
    # request is written or dropped.
    captured = {}
    for _ in range(100):
        if mode == "off":
            break
        captured = capture_metrics(admin)
        if captured.get("lines", 0) + captured.get("dropped", 0) >= int(s["succeeded"]):
            break
        time.sleep(0.1)
    cpu = proc_cpu_seconds(dark.pid) - cpu_before
    stop(dark)
    shutil.rmtree(capture_dir, ignore_errors=True)
    return {"mode": mode, "ok": int(s["succeeded"]), "failed": int(s["failed"]), "cpu": cpu,
            "wall": wall, "lines": captured.get("lines", 0), "bytes": captured.get("bytes", 0),
            "dropped": captured.get("dropped", 0)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hammer", default=default_hammer())
    ap.add_argument("--rounds", type=int, default=env_int("BENCH_ROUNDS", 3))
    ap.add_argument("--duration", type=int, default=env_int("BENCH_DURATION", 5))
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--out", default=os.path.join(default_build_dir(), "dark_capture"))
    ap.add_argument("--no-pin", action="store_true")
    args = ap.parse_args()
    info = RunInfo()
    pin = Pinning(not args.no_pin)
    nice = usable_nice(-10, "dark_capture")
    tmp = tempfile.mkdtemp(prefix="hammer-capture-bench-")
    serve, (upstream,) = start_hammer(pin.first() + [args.hammer, "serve", "--listen",
                                                     "127.0.0.1:0", "--threads", "1"], nice=nice)
    runs = []
    try:
        for rnd in range(args.rounds):
            order = MODES[rnd % 3:] + MODES[:rnd % 3]
            for mode in order:
                r = run_mode(args, mode, tmp, pin, upstream, nice)
                r["round"] = rnd
                runs.append(r)
                print(json.dumps(r), file=sys.stderr)
    finally:
        stop(serve)
        shutil.rmtree(tmp, ignore_errors=True)

    def per_request_us(mode):
        return [1e6 * r["cpu"] / max(r["ok"], 1) for r in runs if r["mode"] == mode]

    lines = [f"## dark capture — {info.title_time()}", "",
             "`hammer dark --threads 1` CPU per request (utime+stime of the process, writer "
             "thread included), JSON-lines requests with bodies of 0–4 KiB, "
             f"closed loop -c {args.connections}, {args.duration} s a run, {args.rounds} rounds; "
             "median (min–max).", "",
             "| capture | proxy CPU µs/request | ÷ off | bytes/request | requests/s | dropped |",
             "|---|---|---|---|---|---|"]
    for mode in MODES:
        rs = [r for r in runs if r["mode"] == mode]
        ratio = "1" if mode == "off" else round_ratio(runs, "mode", mode, "off")
        size = (span([r["bytes"] / max(r["lines"], 1) for r in rs], ".0f")
                if mode != "off" else "–")
        rps = span([r["ok"] / r["wall"] for r in rs], ".0f")
        dropped = "–" if mode == "off" else str(sum(r["dropped"] for r in rs))
        lines.append(f"| {mode} | {span(per_request_us(mode), '.1f')} | {ratio} | {size} | "
                     f"{rps} | {dropped} |")
    lines += ["", "Goal (issue 47): on ÷ off ≤ 1.15. " + pin.describe(
        "generator and upstream", "proxy") + " " + info.host(args.hammer), ""]
    write_results(args.out, "dark_capture", "\n".join(lines), runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
