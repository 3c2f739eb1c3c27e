"""hammer load --remote-write: four workers (four processes with worker indices 0-3, then four
mappers of a Hadoop Streaming job on the local runner) push their live metrics to a real
Prometheus (Debian's `prometheus`, started with its remote-write receiver), and PromQL over what
they pushed gives the fleet's request rate, its final request count exactly, and a p99 from the
summed histogram buckets within one bucket of the p99 `hammer stats` computes from the workers'
merged partials. The
shipped recording rules (integrations/prometheus/hammer-rules.yml) pass `promtool check rules`
and record data, and every query of the Grafana dashboard
(integrations/grafana/hammer-dashboard.json) parses and returns data."""
import json
import subprocess
import time

import pytest

from hadoop_harness import StreamingCluster, remove_tree, require_harness
from harness import HAMMER, ROOT, HammerServe, free_port, wait_for
from prerequisites import require_program
from prometheus_server import Prometheus

RUN = "fleet-test-1"
WORKERS = 4
RATE_TOTAL = 200  # requests per second over the fleet
SECONDS = 8
RULES = ROOT / "integrations" / "prometheus" / "hammer-rules.yml"
DASHBOARD = ROOT / "integrations" / "grafana" / "hammer-dashboard.json"
# hammer_load_latency_seconds's bucket bounds (load_metrics.h, kLatencyBoundsMicros), seconds.
BOUNDS = [b / 1e6 for b in (100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000,
                            100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000,
                            10_000_000)]


@pytest.fixture
def serve():
    server = HammerServe("--threads", "2", "--latency", "exp:5ms", "--error-rate", "0.05")
    yield server
    server.stop()


@pytest.fixture
def prometheus(tmp_path):
    server = Prometheus(
        "global:\n  evaluation_interval: 1s\n"
        f"rule_files:\n  - {RULES}\n", tmp_path, "--web.enable-remote-write-receiver")
    yield server
    server.stop()


def bucket_index(seconds):
    """Which bucket of BOUNDS holds `seconds` (len(BOUNDS): the +Inf bucket)."""
    return next((i for i, bound in enumerate(BOUNDS) if seconds <= bound), len(BOUNDS))


def merged_partials(parts):
    """`hammer stats --json` over the workers' partials: the run's exact figures."""
    return json.loads(subprocess.run([HAMMER, "stats", "--json", *map(str, parts)],
                                     capture_output=True, text=True, timeout=60,
                                     check=True).stdout)


def check_fleet_totals(prometheus, sel, merged):
    """After every worker's final push: the fleet's totals are exactly the merged partials', its
    p99 over the summed buckets within one bucket of theirs. Returns both p99s."""
    assert prometheus.scalar(f"sum(hammer_load_requests_total{{{sel}}})") == merged["requests"]
    assert prometheus.scalar(f"sum(hammer_load_latency_seconds_count{{{sel}}})") == \
        merged["succeeded"]
    assert prometheus.scalar(f"sum(hammer_load_running{{{sel}}})") == 0
    per_worker = prometheus.query(f"sum by (worker) (hammer_load_requests_total{{{sel}}})")
    assert sorted(m["worker"] for m, _ in per_worker) == ["0", "1", "2", "3"]
    p99 = prometheus.scalar(
        f"histogram_quantile(0.99, sum by (le) (hammer_load_latency_seconds_bucket{{{sel}}}))")
    merged_p99 = merged["latency"]["p99_us"] / 1e6
    assert p99 is not None and abs(bucket_index(p99) - bucket_index(merged_p99)) <= 1, \
        (p99, merged_p99)
    return p99, merged_p99


def run_workers(serve, tmp_path, *args):
    """Runs the WORKERS processes at once; returns their partial files and stderr texts."""
    procs = []
    for index in range(WORKERS):
        part = tmp_path / f"part-{index:05d}"
        env = {"PATH": "/usr/bin:/bin", "HAMMER_WORKER_INDEX": str(index),
               "HAMMER_WORKERS": str(WORKERS), "HAMMER_RUN_ID": RUN}
        with open(part, "w") as out:
            procs.append((part, subprocess.Popen(
                [HAMMER, "load", serve.url("/"), "--loop", "-d", f"{SECONDS}s", "--rate-total",
                 str(RATE_TOTAL), "-c", "50", "-t", "1", "--emit", "partials", "-q", *args],
                env=env, stdout=out, stderr=subprocess.PIPE, text=True)))
    results = []
    for part, proc in procs:
        _, stderr = proc.communicate(timeout=SECONDS + 60)
        assert proc.returncode == 0, stderr
        results.append((part, stderr))
    return results


def test_four_workers_push_one_fleet_view(serve, prometheus, tmp_path):
    start = time.time()
    workers = run_workers(serve, tmp_path, "--remote-write", f"{prometheus.url}/api/v1/write",
                          "--push-interval", "1s")
    end = time.time()
    for _, stderr in workers:
        assert "remote-write" not in stderr, stderr  # no push failed
    merged = merged_partials(part for part, _ in workers)
    assert merged["failures"].get("http_5xx", 0) > 0  # the error rate by type has data

    sel = f'run_id="{RUN}"'
    p99, merged_p99 = check_fleet_totals(prometheus, sel, merged)
    assert prometheus.scalar(f'sum(hammer_load_requests_total{{{sel},outcome="http_5xx"}})') == \
        merged["failures"]["http_5xx"]

    # While it ran: the fleet's rate is what --rate-total asked for.
    middle = start + SECONDS / 2 + 1
    rate = prometheus.scalar(f"sum(rate(hammer_load_requests_total{{{sel}}}[4s]))", time=middle)
    assert rate is not None and abs(rate - RATE_TOTAL) <= 0.25 * RATE_TOTAL, rate
    print(f"fleet rate {rate:.1f} req/s (asked {RATE_TOTAL}); histogram_quantile p99 "
          f"{p99 * 1e3:.2f} ms, merged partials' p99 {merged_p99 * 1e3:.2f} ms")

    check_rules(prometheus, sel)
    check_dashboard(prometheus, start, end)


def test_four_hadoop_mappers_push_one_fleet_view(serve, prometheus, tmp_path, hammer_bin):
    """The same view from a Hadoop Streaming job: run_id is the job's id, worker each map task's
    partition, with nothing but --remote-write on the mapper's command line."""
    require_harness()
    work = tmp_path / "hadoop"
    cluster = StreamingCluster("local", work)
    try:
        urls = tmp_path / "urls.txt"
        urls.write_text(f"{serve.url('/')}\n" * WORKERS)  # one line, one mapper
        job = cluster.run("fleet", [urls], [
            "-D", "mapreduce.map.maxattempts=1", "-D", "mapreduce.map.speculative=false",
            "-D", "mapreduce.job.reduces=0", "-D", "mapreduce.local.map.tasks.maximum=4",
            "-D", "mapreduce.input.lineinputformat.linespermap=1",
            "-inputformat", "org.apache.hadoop.mapred.lib.NLineInputFormat",
            "-mapper", f"{hammer_bin} load --loop -d 4s --rate-total {RATE_TOTAL} -c 50 "
                       f"--emit partials --remote-write {prometheus.url}/api/v1/write "
                       "--push-interval 1s"])
        assert job.rc == 0, f"{job.reply}\n{cluster.log_tail()}"
        parts = job.part_files()
        assert len(parts) == WORKERS
        p99, merged_p99 = check_fleet_totals(prometheus, f'run_id="{job.job_id}"',
                                             merged_partials(parts))
        print(f"Hadoop job {job.job_id}: histogram_quantile p99 {p99 * 1e3:.2f} ms, merged "
              f"partials' p99 {merged_p99 * 1e3:.2f} ms")
    finally:
        cluster.close()
        remove_tree(work)


def check_rules(prometheus, sel):
    require_program("promtool", "prometheus")
    lint = subprocess.run(["promtool", "check", "rules", str(RULES)], capture_output=True,
                          text=True, timeout=60)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    groups = prometheus.api("rules")["groups"]
    records = [rule["name"] for group in groups for rule in group["rules"]]
    assert records and f"SUCCESS: {len(records)} rules found" in lint.stdout, lint.stdout
    # Rules are evaluated every second over the last minute: each records the run's value.
    wait_for(lambda: all(prometheus.query(f"{r}{{{sel}}}") for r in records), timeout=30,
             what="every recording rule's series for the run")


def check_dashboard(prometheus, start, end):
    dashboard = json.loads(DASHBOARD.read_text())
    variable = next(v for v in dashboard["templating"]["list"] if v["name"] == "run_id")
    assert variable["query"]["query"] == "label_values(hammer_load_running, run_id)"
    assert RUN in prometheus.api("label/run_id/values")
    queries = [(panel["title"], target["expr"]) for panel in dashboard["panels"]
               for target in panel["targets"]]
    assert len(queries) >= 10
    for title, expr in queries:
        promql = expr.replace("$run_id", RUN).replace("$__rate_interval", "4s")
        data = prometheus.api("query_range", query=promql, start=start, end=end + 1, step=1)
        assert data["result"], (title, promql)


def test_a_rejecting_or_missing_receiver_is_said_once_and_never_stops_the_run(serve, tmp_path):
    # hammer serve answers /status/400 with 400: the receiver refuses every push.
    rejected = subprocess.run(
        [HAMMER, "load", serve.url("/"), "--loop", "-d", "2s", "--rate", "50", "--emit", "none",
         "-q", "--remote-write", serve.url("/status/400"), "--push-interval", "200ms"],
        capture_output=True, text=True, timeout=60)
    assert rejected.returncode == 0, rejected.stderr
    said = [line for line in rejected.stderr.splitlines() if "rejected" in line]
    assert len(said) == 1 and "(HTTP 400" in said[0], rejected.stderr
    summary = [line for line in rejected.stderr.splitlines() if "pushes failed" in line]
    assert len(summary) == 1, rejected.stderr

    # Nothing listens there: the run ends as usual, the failure said once.
    nowhere = f"http://127.0.0.1:{free_port()}/api/v1/write"
    started = time.monotonic()
    missing = subprocess.run(
        [HAMMER, "load", serve.url("/"), "--loop", "-d", "2s", "--rate", "50", "--emit", "none",
         "-q", "--remote-write", nowhere, "--push-interval", "200ms"],
        capture_output=True, text=True, timeout=60)
    assert missing.returncode == 0, missing.stderr
    assert missing.stderr.count("a push failed") == 1, missing.stderr
    assert "pushes failed" in missing.stderr
    assert time.monotonic() - started < 30


def test_remote_write_usage_errors(serve):
    for args, message in (
            (["--push-interval", "1s"], "--push-interval needs --remote-write"),
            (["--remote-write", "not a url"], "--remote-write"),
            (["--remote-write", "http://127.0.0.1:9/", "--push-interval", "0s"],
             "--push-interval: must be more than 0")):
        r = subprocess.run([HAMMER, "load", serve.url("/"), "-n", "1", *args],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 2, (args, r.stderr)
        assert message in r.stderr, (args, r.stderr)
