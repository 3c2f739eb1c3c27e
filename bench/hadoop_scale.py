#!/usr/bin/env python3
"""Hadoop scale benchmark: the same total work as a Streaming job with 1, 2 and 4 map tasks.

The job is the recommended shape (integrations/hadoop/run-load-test.sh, tested by
tests/integration/test_hadoop_streaming.py), run on a real Hadoop 3.4 through the integration
harness (tests/integration/hadoop_harness.py, integrations/jvm/hadoop-streaming):

  mapper    hammer load --loop -n TOTAL/N -c 50 -t 1    (one event-loop thread = one core, as a
                                                         YARN map container gets 1 vcore)
  combiner  hammer stats --combine
  reducer   hammer stats --reducer                      (1 reduce task)
  input     4 URL lines (http://127.0.0.1:PORT/scale/0..3) split by NLineInputFormat with
            linespermap = 4/N, i.e. exactly N map tasks of 4/N lines each; every mapper cycles
            its lines, so each URL gets exactly TOTAL/4 requests whatever N is
  settings  mapreduce.map.maxattempts=1, speculation off, mapreduce.local.map.tasks.maximum=N
            (LocalJobRunner runs the N maps in parallel; its default is 1 at a time), and
            mapreduce.client.progressmonitor.pollinterval=100 (StreamJob waits for the job by
            polling every 1 s by default, which rounds wall times up to whole seconds)

Same total work = the same number of requests (default 200,000) for every N: each mapper sends
TOTAL/N. Closed loop, 50 connections per mapper: a map task is the unit of capacity that scales
out, so each one keeps its own connections, as it would on its own node. A second variant,
`--emit partials` without the combiner (docs/cluster.md's alternative), separates the cost of
Hadoop's per-record path from the mappers' own.

Target: one nginx worker on 127.0.0.1 answering `200 ok` (as in bench/load_engine.py), not
`hammer serve`: it is cheap and well known, so the CPU we attribute to the job is not our own
server's, and its cost is measured separately (its worker's CPU from /proc). It shares the 2
cores with the job: that is the point of the analysis in bench/RESULTS.md.

Measured per job:
- wall: the job's run time as the harness reports it (ToolRunner.run: submit to done).
- sending: first request to last response over all mappers. Each mapper runs under this very
  script in `--task-wrapper` mode, which appends `--summary-json` (a file per task attempt),
  waits for hammer with wait4() and records its rusage and exit time; a mapper's sending window
  is [exit - summary.seconds, exit].
- req/s: total requests / sending.
- CPU µs/req: the mappers' user+sys (hammer's wait4 rusage) / total requests; also without the
  fixed CPU of a hammer process (measured once: `hammer load -n 4`), and the mappers' context
  switches per request.
- overhead: wall - sending (job start-up, shuffle, reduce, commit); and its CPU: the CPU of the
  harness JVM's process tree over the job (utime+stime+cutime+cstime of every live process
  under it, from /proc: reaped task processes and YARN containers land in cutime) minus the
  mappers' hammer CPU. It includes the JVM's own streaming/sort/spill work on the map output,
  the combiner and the reducer, and the wrapper's Python start-up (~30 ms per task).
- nginx µs/req: the target worker's CPU over the job / requests.
- busy: the whole machine's CPU use over the job (/proc/stat), and how much of it was others'
  (other tenants compile on this VM). nginx and the job's sessions (on YARN: every container,
  which NodeManager starts with setsid) run at autogroup nice -10 (--nice), as in
  bench/dark_proxy.py, so that the tenants' compilers take less of the 2 cores.
Checked per job: N task attempts, all exit 0, 0 failed requests, the reducer's per-URL counts
each TOTAL/4 and summing to TOTAL, no malformed lines, MAP_INPUT_RECORDS = 4, MAP_OUTPUT_RECORDS
= TOTAL (records) or 4 (partials), on YARN TOTAL_LAUNCHED_MAPS = N.

Local mode (LocalJobRunner, file://) for every (variant, N), `--rounds` rounds, the order
rotating each round, after one unrecorded warm-up job per variant (class loading in the
long-lived JVM). Then, unless `--mini-maps 0`, the recommended shape on MiniDFS + MiniYARN (real
containers: 1 NodeManager) for the given N, `--mini-rounds` rounds.

Standard library + tests/integration/hadoop_harness.py. Needs the JDK 17 and mvn (the harness
jar is built by scripts/jvm-deps.sh if missing) and nginx. Raw runs and a summary go under
--out (default build/bench/hadoop_scale), the summary also to $BENCH_SUMMARY_DIR. Runtime with
the defaults: about 2.5-4 minutes (the mini cluster alone takes 15-45 s to start).
Usage: bench/hadoop_scale.py [--rounds 3] [--requests 200000] [--maps 1,2,4]
                             [--emit records,partials] [--mini-maps 1,2,4] [--mini-rounds 1]
                             [--connections 50] [--nice -10] [--hammer PATH]
"""
from __future__ import annotations

import os
import subprocess
import sys
import time


def task_wrapper(argv: list[str]) -> int:
    """`hadoop_scale.py --task-wrapper DIR CMD...`: the map task's command. Runs CMD with
    --summary-json DIR/<attempt>.summary.json (stdin/stdout/stderr are the task's), and writes
    DIR/<attempt>.task.json with its rusage and timing. Exits with CMD's status."""
    out_dir, cmd = argv[0], argv[1:]
    attempt = os.environ.get("mapreduce_task_attempt_id") or f"pid{os.getpid()}"
    summary = os.path.join(out_dir, attempt + ".summary.json")
    start = time.time()
    proc = subprocess.Popen(cmd + ["--summary-json", summary])
    _, status, ru = os.wait4(proc.pid, 0)
    end = time.time()
    rc = os.waitstatus_to_exitcode(status)
    import json
    info = {"attempt": attempt, "partition": os.environ.get("mapreduce_task_partition"),
            "job_maps": os.environ.get("mapreduce_job_maps"),
            "container": os.environ.get("CONTAINER_ID"), "rc": rc, "start": start, "end": end,
            "user": ru.ru_utime, "sys": ru.ru_stime, "nvcsw": ru.ru_nvcsw,
            "nivcsw": ru.ru_nivcsw, "summary": summary}
    tmp = os.path.join(out_dir, attempt + ".task.json.tmp")
    with open(tmp, "w") as f:
        json.dump(info, f)
    os.replace(tmp, os.path.join(out_dir, attempt + ".task.json"))
    return rc


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "--task-wrapper":
    sys.exit(task_wrapper(sys.argv[2:]))

# ---------------------------------------------------------------------------------------------
# The benchmark driver.

import argparse  # noqa: E402
import atexit  # noqa: E402
import glob  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (NGINX_OK_CONF, REPO, Nginx, RunInfo, default_build_dir,  # noqa: E402
                      default_hammer, env_int, install_cleanup, machine_busy, median,
                      proc_cpu_seconds, session_leaders_under, set_autogroup_nice,
                      snapshot_hammer, tree_cpu_seconds, usable_nice, write_results)
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
from hadoop_harness import StreamingCluster, build_harness, java17_available  # noqa: E402

SCRIPT = os.path.abspath(__file__)
LINES = 4  # URL lines in the input: a multiple of every N, so each URL gets TOTAL/LINES
COMMON_D = ["-D", "mapreduce.map.maxattempts=1", "-D", "mapreduce.reduce.maxattempts=1",
            "-D", "mapreduce.map.speculative=false", "-D", "mapreduce.reduce.speculative=false",
            "-D", "mapreduce.task.timeout=600000",
            # StreamJob waits for the job in JobClient.monitorAndPrintJob, which polls every
            # progressmonitor.pollinterval (1 s by default): that would round wall times up to
            # the next second.
            "-D", "mapreduce.client.progressmonitor.pollinterval=100"]
REDUCER_COLUMNS = 12  # key sum average max min errors count p50 p90 p99 p99.9 histogram

NICE = 0  # autogroup nice of nginx and of the job's sessions (--nice)
_clusters: list[StreamingCluster] = []


def _close_clusters() -> None:
    for c in _clusters:
        c.close(timeout=30)
    _clusters.clear()


class SessionBooster(threading.Thread):
    """Gives every session started under `root` (YARN launches each container with setsid, a
    new autogroup at nice 0) the autogroup nice of the job, 5 times a second."""

    def __init__(self, root: int, nice: int):
        super().__init__(daemon=True)
        self.root, self.nice, self.done = root, nice, threading.Event()
        self.boosted: set[int] = set()

    def run(self):
        while not self.done.wait(0.2):
            for pid in session_leaders_under(self.root):
                if pid not in self.boosted and set_autogroup_nice(pid, self.nice):
                    self.boosted.add(pid)

    def stop(self):
        self.done.set()
        self.join()


# ---------------------------------------------------------------------------------------------
# nginx


# ---------------------------------------------------------------------------------------------
# One job


class JobFailed(RuntimeError):
    pass


def run_job(cluster, name, maps, emit, args, tmp, urls_path, urls, nginx_pid,
            warmup=False) -> dict:
    """emit "records": one record per request, combiner `hammer stats --combine` (the
    recommended shape); "partials": `--emit partials`, one partial per URL and task, no
    combiner."""
    total = args.requests if not warmup else args.warmup_requests
    task_dir = os.path.join(tmp, "tasks", name)
    os.makedirs(task_dir)
    mapper = (f"{sys.executable} {SCRIPT} --task-wrapper {task_dir} {args.hammer} load --loop "
              f"-n {total // maps} -c {args.connections} -t 1 --no-table -q --emit {emit}")
    job_args = [*COMMON_D, "-D", "mapreduce.job.reduces=1",
                "-D", f"mapreduce.local.map.tasks.maximum={maps}",
                "-D", f"mapreduce.input.lineinputformat.linespermap={LINES // maps}",
                "-inputformat", "org.apache.hadoop.mapred.lib.NLineInputFormat",
                "-mapper", mapper]
    if emit == "records":
        job_args += ["-combiner", f"{args.hammer} stats --combine"]
    job_args += ["-reducer", f"{args.hammer} stats --reducer"]
    jvm = cluster.proc.pid
    tree0, nginx0, busy0 = tree_cpu_seconds(jvm), proc_cpu_seconds(nginx_pid), machine_busy()
    t0 = time.monotonic()
    job = cluster.run(name, [urls_path], job_args, timeout=args.job_timeout)
    outer = time.monotonic() - t0
    if cluster.mode == "mini":
        time.sleep(1.0)  # let the AM container exit and be reaped, so its CPU is counted
    tree1, nginx1, busy1 = tree_cpu_seconds(jvm), proc_cpu_seconds(nginx_pid), machine_busy()
    if job.rc != 0:
        raise JobFailed(f"{name}: job failed (rc={job.rc}): {job.reply}\n{cluster.log_tail()}")

    # The mappers' own accounts.
    tasks = []
    for path in sorted(glob.glob(os.path.join(task_dir, "*.task.json"))):
        with open(path) as f:
            t = json.load(f)
        with open(t["summary"]) as f:
            t["s"] = json.load(f)
        tasks.append(t)
    problems = []
    if len(tasks) != maps:
        problems.append(f"{len(tasks)} mapper accounts, expected {maps}")
    if sorted(str(t["partition"]) for t in tasks) != [str(i) for i in range(maps)]:
        problems.append(f"partitions {[t['partition'] for t in tasks]}")
    for t in tasks:
        if t["rc"] != 0:
            problems.append(f"{t['attempt']} exited {t['rc']}")
        if t["s"]["failed"] != 0 or t["s"]["requests"] != total // maps:
            problems.append(f"{t['attempt']}: {t['s']['requests']} requests, "
                            f"{t['s']['failed']} failed")
    # The reducer's per-URL counts: the work really was done, each URL TOTAL/LINES times.
    rows = {}
    for line in job.part_lines():
        cols = line.split("\t")
        if len(cols) != REDUCER_COLUMNS:
            problems.append(f"reducer line with {len(cols)} columns: {line[:80]!r}")
            continue
        rows[cols[0]] = (int(cols[5]), int(cols[6]))
    if set(rows) != set(urls):
        problems.append(f"reducer keys {sorted(rows)}")
    for url, (errors, count) in rows.items():
        if errors != 0 or count != total // LINES:
            problems.append(f"{url}: {count} ok, {errors} errors, expected {total // LINES} ok")
    reduced = sum(count for _, count in rows.values())
    if reduced != total:
        problems.append(f"reducer counts sum to {reduced}, expected {total}")
    if job.counter_group("stats"):
        problems.append(f"stats counters {job.counter_group('stats')}")
    tc = job.task_counter
    # records: one per request; partials: one per URL of each task's split.
    expected_out = total if emit == "records" else LINES
    if tc("MAP_OUTPUT_RECORDS") != expected_out or tc("MAP_INPUT_RECORDS") != LINES:
        problems.append(f"MAP_INPUT_RECORDS {tc('MAP_INPUT_RECORDS')}, "
                        f"MAP_OUTPUT_RECORDS {tc('MAP_OUTPUT_RECORDS')}")
    jc = job.counter_group("org.apache.hadoop.mapreduce.JobCounter")
    if jc and jc.get("TOTAL_LAUNCHED_MAPS") != maps:  # YARN only
        problems.append(f"TOTAL_LAUNCHED_MAPS {jc.get('TOTAL_LAUNCHED_MAPS')}")
    if problems:
        raise JobFailed(f"{name}: " + "; ".join(problems))

    starts = [t["end"] - t["s"]["seconds"] for t in tasks]
    ends = [t["end"] for t in tasks]
    sending = max(ends) - min(starts)
    mapper_cpu = sum(t["user"] + t["sys"] for t in tasks)
    mapper_user = sum(t["user"] for t in tasks)
    tree_cpu = tree1 - tree0
    busy = (busy1[0] - busy0[0]) / max(busy1[1] - busy0[1], 1)  # fraction of all CPUs
    ncpu = os.cpu_count() or 1
    ours = (tree_cpu + nginx1 - nginx0) / max(outer, 1e-9) / ncpu
    shutil.rmtree(os.path.join(cluster.work, "out", name), ignore_errors=True)
    return {
        "name": name, "mode": cluster.mode, "emit": emit, "maps": maps, "requests": total,
        "wall": job.seconds, "outer_wall": outer, "sending": sending,
        "rps": total / sending,
        "mapper_seconds": [t["s"]["seconds"] for t in tasks],
        "start_skew": max(starts) - min(starts),
        "mapper_cpu": mapper_cpu, "mapper_user_share": mapper_user / max(mapper_cpu, 1e-9),
        "us_per_req": 1e6 * mapper_cpu / total,
        # Context switches of the mappers per 1000 requests: voluntary (an epoll_wait that
        # found nothing ready) and involuntary (preempted).
        "vcs_per_kreq": 1e3 * sum(t["nvcsw"] for t in tasks) / total,
        "ivcs_per_kreq": 1e3 * sum(t["nivcsw"] for t in tasks) / total,
        "marginal_us_per_req": 1e6 * (mapper_cpu - maps * args.startup_cpu) / total,
        # How much of a core each mapper got while it was sending.
        "mapper_core_use": mapper_cpu / max(sum(t["s"]["seconds"] for t in tasks), 1e-9),
        "overhead": job.seconds - sending,
        "tree_cpu": tree_cpu, "overhead_cpu": tree_cpu - mapper_cpu,
        "overhead_us_per_req": 1e6 * (tree_cpu - mapper_cpu) / total,
        "nginx_us_per_req": 1e6 * (nginx1 - nginx0) / total,
        "nginx_core_use": (nginx1 - nginx0) / max(sending, 1e-9),
        "busy": busy, "others": max(busy - ours, 0.0),
        "reducer_rows": len(rows), "reduced_count": reduced,
        "combine_out": tc("COMBINE_OUTPUT_RECORDS"), "job_id": job.job_id,
    }


def startup_cpu(hammer: str, url: str, times: int = 5) -> float:
    """Median CPU seconds of a `hammer load` process that sends 4 requests: its fixed cost
    (start-up, TLS context and CA store, teardown), paid once per mapper."""
    cpu = []
    for _ in range(times):
        p = subprocess.Popen([hammer, "load", "-n", "4", "-c", "1", "-t", "1", "--emit", "none",
                              "-q", "--no-table", "--loop"], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        p.stdin.write((url + "\n").encode())
        p.stdin.close()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            raise RuntimeError(f"hammer load -n 4 exited {p.returncode}")
        cpu.append(ru.ru_utime + ru.ru_stime)
    return median(cpu)


def fmt_run(r: dict) -> str:
    return (f"{r['mode']:<5} {r['emit']:<8} maps={r['maps']} wall {r['wall']:6.2f}s  sending "
            f"{r['sending']:6.2f}s {r['rps']:>8,.0f} req/s  {r['us_per_req']:6.2f} us CPU/req "
            f"(mappers at {100 * r['mapper_core_use']:.0f}% of a core)  overhead "
            f"{r['overhead']:5.2f}s {r['overhead_us_per_req']:5.2f} us/req  nginx "
            f"{r['nginx_us_per_req']:5.2f} us/req ({100 * r['nginx_core_use']:.0f}%)  machine "
            f"busy {100 * r['busy']:.0f}% (others {100 * r['others']:.0f}%)")


# ---------------------------------------------------------------------------------------------




def table(runs: list[dict], maps_list: list[int], mode: str, emit: str) -> list[str]:
    head = ["maps", "wall s", "sending s", "req/s", "speed-up", "CPU µs/req",
            "CPU µs/req excl. start-up", "core use/mapper", "ctx sw/1k req (vol+invol)",
            "job overhead s", "overhead CPU s", "overhead CPU µs/req", "nginx µs/req",
            "nginx core use",
            "machine busy (others)"]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(["---:"] * len(head)) + "|"]
    base = None
    for n in sorted(maps_list):
        mine = [r for r in runs if r["maps"] == n and r["mode"] == mode and r["emit"] == emit]
        if not mine:
            continue

        def m(key, scale=1.0):
            return median([scale * r[key] for r in mine])

        def rng(key, spec, scale=1.0):
            vals = [scale * r[key] for r in mine]
            if len(vals) == 1:
                return format(vals[0], spec)
            return (f"{format(median(vals), spec)} ({format(min(vals), spec)}–"
                    f"{format(max(vals), spec)})")
        rps = m("rps")
        if base is None:
            base = rps
        out.append("| " + " | ".join([
            str(n), rng("wall", ".1f"), rng("sending", ".2f"), rng("rps", ",.0f"),
            f"{rps / base:.2f}×", rng("us_per_req", ".2f"), f"{m('marginal_us_per_req'):.2f}",
            f"{m('mapper_core_use', 100):.0f} %",
            f"{m('vcs_per_kreq'):.0f}+{m('ivcs_per_kreq'):.0f}", rng("overhead", ".1f"),
            f"{m('overhead_cpu'):.2f}", f"{m('overhead_us_per_req'):.1f}",
            f"{m('nginx_us_per_req'):.1f}",
            f"{m('nginx_core_use', 100):.0f} %",
            f"{m('busy', 100):.0f} % ({m('others', 100):.0f} %)"]) + " |")
    return out


EMIT_TITLE = {
    "records": "mapper `--emit records` (1 record per request) + combiner `hammer stats "
               "--combine` — the recommended shape",
    "partials": "mapper `--emit partials` (1 partial per URL and task), no combiner",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=env_int("BENCH_ROUNDS", 3))
    ap.add_argument("--requests", type=int, default=200_000, help="total requests per job")
    ap.add_argument("--maps", default="1,2,4", help="map-task counts (each must divide 4)")
    ap.add_argument("--emit", default="records,partials",
                    help="mapper outputs to measure in local mode: records (with the combiner), "
                         "partials (without)")
    ap.add_argument("--mini-maps", default="1,2,4",
                    help="map-task counts to run on MiniDFS+MiniYARN too ('0': skip)")
    ap.add_argument("--mini-emit", default="records")
    ap.add_argument("--mini-rounds", type=int, default=1)
    ap.add_argument("--connections", type=int, default=50, help="per mapper")
    ap.add_argument("--warmup-requests", type=int, default=20_000)
    ap.add_argument("--job-timeout", type=int, default=240)
    ap.add_argument("--nice", type=int, default=-10,
                    help="autogroup nice of nginx and the job's sessions (below 0 needs root; "
                         "0: off)")
    ap.add_argument("--java-opts", default=None,
                    help="extra JVM options for the harness JVM (HAMMER_HARNESS_JAVA_OPTS)")
    ap.add_argument("--hammer", default=default_hammer())
    ap.add_argument("--build-dir", default=default_build_dir())
    ap.add_argument("--out", default=None, help="results dir (default BUILD_DIR/hadoop_scale)")
    args = ap.parse_args()
    maps_list = [int(x) for x in args.maps.split(",") if x.strip()]
    mini_maps = [int(x) for x in args.mini_maps.split(",") if x.strip() and int(x) > 0]
    emits = [e.strip() for e in args.emit.split(",") if e.strip()]
    for e in emits + [args.mini_emit]:
        if e not in EMIT_TITLE:
            sys.exit(f"--emit: records or partials, not {e!r}")
    for n in maps_list + mini_maps:
        if n <= 0 or LINES % n:
            sys.exit(f"--maps: {n} does not divide {LINES}")
    for total in (args.requests, args.warmup_requests):
        if total % LINES:
            sys.exit(f"request counts must be multiples of {LINES}")
    if not java17_available() or shutil.which("mvn") is None or shutil.which("nginx") is None:
        sys.exit("hadoop_scale: needs the JDK 17, mvn and nginx (scripts/deps.sh test)")
    global NICE
    NICE = args.nice = usable_nice(args.nice, "hadoop_scale")
    if args.java_opts is not None:
        os.environ["HAMMER_HARNESS_JAVA_OPTS"] = args.java_opts

    install_cleanup(_close_clusters)

    out_dir = args.out or os.path.join(args.build_dir, "hadoop_scale")
    os.makedirs(out_dir, exist_ok=True)
    hammer_source = os.path.relpath(args.hammer, REPO)
    args.hammer = snapshot_hammer(args.hammer, args.build_dir, "hammer-hadoop-scale", "load")
    for path in (args.hammer, SCRIPT, sys.executable):
        if any(ch.isspace() for ch in path):
            sys.exit(f"streaming splits commands on spaces: {path!r} has one")
    build_harness()

    info = RunInfo()
    tmp = tempfile.mkdtemp(prefix="hammer-bench-hadoop-")
    atexit.register(shutil.rmtree, tmp, True)
    nginx = Nginx(os.path.join(tmp, "nginx"), NGINX_OK_CONF, nice=NICE)
    port, nginx_pid = nginx.port, nginx.worker
    urls = [f"http://127.0.0.1:{port}/scale/{i}" for i in range(LINES)]
    urls_path = os.path.join(tmp, "urls.txt")
    with open(urls_path, "w") as f:
        f.write("".join(u + "\n" for u in urls))
    args.startup_cpu = startup_cpu(args.hammer, urls[0])
    print(f"# hadoop_scale: nginx 1 worker at 127.0.0.1:{port}, {args.requests} requests per "
          f"job, maps {maps_list} x {emits} x {args.rounds} rounds (local), mini {mini_maps} "
          f"{args.mini_emit} x {args.mini_rounds}", file=sys.stderr)

    runs: list[dict] = []
    starts: dict[str, float] = {}
    raw = open(os.path.join(out_dir, "raw.tsv"), "w")
    raw.write("mode\temit\tround\tmaps\trequests\twall\tsending\trps\tmapper_cpu\t"
              "us_per_req\tmapper_core_use\toverhead\toverhead_cpu\tnginx_us_per_req\tbusy\t"
              "others\tstart_skew\n")

    def record(r, rnd):
        r["round"] = rnd
        runs.append(r)
        raw.write(f"{r['mode']}\t{r['emit']}\t{rnd}\t{r['maps']}\t{r['requests']}\t"
                  f"{r['wall']:.3f}\t{r['sending']:.3f}\t{r['rps']:.0f}\t{r['mapper_cpu']:.4f}\t"
                  f"{r['us_per_req']:.3f}\t{r['mapper_core_use']:.3f}\t{r['overhead']:.3f}\t"
                  f"{r['overhead_cpu']:.2f}\t{r['nginx_us_per_req']:.2f}\t{r['busy']:.3f}\t"
                  f"{r['others']:.3f}\t{r['start_skew']:.3f}\n")
        raw.flush()
        print(f"  round {rnd + 1} {fmt_run(r)}", file=sys.stderr)

    # Local mode: every (emit, N), rounds interleaved, the order rotating each round.
    local = StreamingCluster("local", os.path.join(tmp, "hadoop-local"))
    _clusters.append(local)
    starts["local"] = local.start_seconds
    if NICE:
        set_autogroup_nice(local.proc.pid, NICE)  # tasks stay in the JVM's session
    warm = []
    for e in emits:
        warm.append(run_job(local, f"warmup-local-{e}", max(maps_list), e, args, tmp, urls_path,
                            urls, nginx_pid, warmup=True))
        print(f"  warm-up {fmt_run(warm[-1])}", file=sys.stderr)
    combos = [(e, n) for e in emits for n in maps_list]
    for rnd in range(args.rounds):
        k = rnd % len(combos)
        for e, n in combos[k:] + combos[:k]:
            record(run_job(local, f"local-r{rnd}-{e}-m{n}", n, e, args, tmp, urls_path, urls,
                           nginx_pid), rnd)
    local.close()
    _clusters.remove(local)

    # MiniDFS + MiniYARN: the same job in real containers.
    if mini_maps and args.mini_rounds > 0:
        t0 = time.monotonic()
        mini = StreamingCluster("mini", os.path.join(tmp, "hadoop-mini"), start_timeout=240)
        _clusters.append(mini)
        starts["mini"] = time.monotonic() - t0
        booster = None
        if NICE:
            set_autogroup_nice(mini.proc.pid, NICE)
            booster = SessionBooster(mini.proc.pid, NICE)
            booster.start()
        for rnd in range(args.mini_rounds):
            for n in mini_maps:
                record(run_job(mini, f"mini-r{rnd}-{args.mini_emit}-m{n}", n, args.mini_emit,
                               args, tmp, urls_path, urls, nginx_pid), rnd)
        if booster:
            booster.stop()
        mini.close()
        _clusters.remove(mini)
    raw.close()

    per_round = ["| mode | emit | round | maps | wall s | sending s | req/s | CPU µs/req | "
                 "core use/mapper | overhead s | overhead CPU µs/req | mapper start skew s | "
                 "machine busy (others) |",
                 "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in runs:
        per_round.append(
            f"| {r['mode']} | {r['emit']} | {r['round'] + 1} | {r['maps']} | {r['wall']:.2f} | "
            f"{r['sending']:.2f} | {r['rps']:,.0f} | {r['us_per_req']:.2f} | "
            f"{100 * r['mapper_core_use']:.0f} % | {r['overhead']:.2f} | "
            f"{r['overhead_us_per_req']:.1f} | {r['start_skew']:.2f} | "
            f"{100 * r['busy']:.0f} % ({100 * r['others']:.0f} %) |")
    jvm_opts = os.environ.get("HAMMER_HARNESS_JAVA_OPTS", "")
    lines = [
        f"## hadoop_scale — the same {args.requests:,} requests as a Streaming job with "
        f"{', '.join(map(str, maps_list))} map tasks ({info.title_time()})",
        "",
        f"Mapper `hammer load --loop -n TOTAL/N -c {args.connections} -t 1`, 1 reducer `hammer "
        f"stats --reducer`; NLineInputFormat over {LINES} URL lines (linespermap {LINES}/N), "
        f"maxattempts 1, no speculation; target one nginx worker on 127.0.0.1. Local mode: "
        f"LocalJobRunner with mapreduce.local.map.tasks.maximum=N, {args.rounds} rounds (order "
        f"rotated), medians (min–max), after an unrecorded warm-up job. Every job checked: N "
        f"mappers, 0 failures, reducer per-URL counts {args.requests // LINES:,} each, summing "
        f"to {args.requests:,}. {info.host(hammer_source)} Harness start: "
        + ", ".join(f"{k} {v:.1f} s" for k, v in starts.items()) +
        (f"; harness JVM options +`{jvm_opts}`" if jvm_opts else "") +
        (f"; nginx and every job session at autogroup nice {NICE}" if NICE else "") +
        f"; a `hammer load` process's fixed CPU (start-up and teardown, measured with -n 4): "
        f"{1e3 * args.startup_cpu:.1f} ms.",
    ]
    for e in emits:
        lines += ["", f"Local mode, {EMIT_TITLE[e]}:", "", *table(runs, maps_list, "local", e)]
    if mini_maps and args.mini_rounds > 0:
        lines += ["", f"MiniDFS + MiniYARN (1 NodeManager, every task a container JVM), "
                      f"{EMIT_TITLE[args.mini_emit]}:", "",
                  *table(runs, mini_maps, "mini", args.mini_emit)]
    lines += ["", "Every job:", "", *per_round, "",
              "- sending: first request to last response over all mappers; req/s = requests ÷ "
              "sending; speed-up = req/s ÷ that of the fewest maps; CPU µs/req = mappers' "
              "user+sys (wait4) ÷ requests; excl. start-up: minus N × the fixed CPU of a hammer "
              "process; core use/mapper = mapper CPU ÷ its own sending time.",
              "- job overhead = wall − sending; overhead CPU = CPU of the harness JVM's process "
              "tree over the job − the mappers' CPU (JVM streaming I/O and sort/spill of the "
              "map output, combiner, reducer, task and container start-up) ÷ requests.",
              "- machine busy: all CPUs over the job (/proc/stat); others = what neither the "
              "job nor nginx used (other tenants)."]
    summary = "\n".join(lines) + "\n"
    write_results(out_dir, "hadoop_scale", summary,
                  {"warmup": warm, "runs": runs, "harness_start": starts,
                   "startup_cpu": args.startup_cpu})
    return 0


if __name__ == "__main__":
    sys.exit(main())
