"""hammer load --abort-on-fail: the thresholds judged while the run goes on stop it when one
fails, on one machine from its own figures, and across a fleet from the fleet's merged figures
coordinated through a real ZooKeeper (Debian's zookeeper 3.8): four `hammer load` processes of
one run (HAMMER_RUN_ID, HAMMER_WORKER_INDEX 0-3), each against its own `hammer serve`; only
worker 0's server stops mid-run (`hammer serve --duration`), so each of workers 1-3 alone would
pass `errors<5%` while the fleet's merge fails. All four stop within 2 s of the abort node's
creation, exit 3 and say why, in their summaries and partials. ZooKeeper out of reach: the run
goes on to its end, said once."""
import json
import os
import subprocess
import threading
import time
import uuid

import jsonschema
import pytest

import zookeeper
from hadoop_harness import StreamingCluster, remove_tree, require_harness
from harness import HAMMER, ROOT, ClosedPort, HammerServe, run_hammer, summary_of, wait_for
from zookeeper import zk  # noqa: F401

SCHEMA = json.loads((ROOT / "docs" / "summary.schema.json").read_text())
THRESHOLD = "errors<5%"
RATE = 200  # requests per second, each worker


def start_load(url, tmp_path, name, extra, env=None):
    """A `hammer load` process: partials on stdout, the summary in NAME.json."""
    out = open(tmp_path / f"{name}.partials", "w")
    err = open(tmp_path / f"{name}.stderr", "w")
    proc = subprocess.Popen(
        [HAMMER, "load", url, "-r", str(RATE), "-c", "50", "-d", "60s", "--emit", "partials",
         "--threshold", THRESHOLD, "--summary-json", str(tmp_path / f"{name}.json"), *extra],
        stdout=out, stderr=err, env=env)
    out.close()
    err.close()
    return proc


def wait_all(procs, timeout=40):
    """Waits for every process; returns each one's (exit status, wall-clock time it was seen
    ending), measured from here by one thread per process."""
    ended = [None] * len(procs)

    def wait(i):
        procs[i].wait(timeout=timeout)
        ended[i] = time.time()

    threads = [threading.Thread(target=wait, args=(i,)) for i in range(len(procs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [(p.returncode, ended[i]) for i, p in enumerate(procs)]


def test_fleet_aborts_on_the_merged_figures(zk, tmp_path):  # noqa: F811
    run = "abort-" + uuid.uuid4().hex[:8]
    failing = HammerServe("--duration", "3s")  # worker 0's target stops answering at 3 s
    healthy = [HammerServe() for _ in range(3)]
    targets = [failing, *healthy]
    procs = []
    try:
        for i, target in enumerate(targets):
            env = dict(os.environ, HAMMER_RUN_ID=run, HAMMER_WORKER_INDEX=str(i))
            procs.append(start_load(target.url("/"), tmp_path, f"w{i}",
                                    ["--abort-on-fail", "--abort-grace", "2s",
                                     "--fleet", zk.url("/fleet")], env=env))
        ends = wait_all(procs)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for t in targets:
            t.stop()

    abort_path = f"/fleet/hammer/runs/{run}/abort"
    data, stat = zk._kazoo().get(abort_path)
    node = dict(line.split("\t", 1) for line in data.decode().splitlines())
    assert node["threshold"] == THRESHOLD
    assert node["actual"].endswith("%") and float(node["actual"][:-1]) >= 5
    assert node["worker"] in {"0", "1", "2", "3"}
    created = stat.ctime / 1000.0
    print("seconds from the abort node's creation to each worker's end: " +
          ", ".join(f"{ended - created:.3f}" for _, ended in ends))
    for i, (status, ended) in enumerate(ends):
        stderr = (tmp_path / f"w{i}.stderr").read_text()
        assert status == 3, stderr
        # Every worker stopped within 2 s of the abort node's creation.
        assert ended - created < 2.0, (i, ended - created, stderr)
        assert "aborted (--abort-on-fail): threshold errors<5% failed on the fleet's figures" \
            in stderr, stderr
        summary = summary_of(tmp_path / f"w{i}.json")
        jsonschema.validate(summary, SCHEMA)
        assert summary["aborted"] is True
        assert summary["abort"]["threshold"] == THRESHOLD
        assert summary["abort"]["fleet"] is True
        assert summary["seconds"] < 30
        partials = (tmp_path / f"w{i}.partials").read_text()
        assert "(aborted)\t#hab1 threshold errors<5% failed on the fleet's figures" in partials
        if i > 0:
            # Alone, each of workers 1-3 passes the threshold: only the merge fails it.
            assert summary["failed"] == 0, summary
    # The workers' nodes were ephemeral: gone with their sessions. The run's nodes stay.
    assert zk.children(f"/fleet/hammer/runs/{run}/workers") == []

    # The job's final step: the merged partials fail the threshold and say why.
    merged = run_hammer(["stats", "--threshold", THRESHOLD,
                         *[str(tmp_path / f"w{i}.partials") for i in range(4)]])
    assert merged.returncode == 3, merged.stderr
    assert "the run was aborted (--abort-on-fail; 4 notes read)" in merged.stderr
    assert "malformed" not in merged.stderr


def test_four_hadoop_mappers_abort_together(zk, tmp_path, hammer_bin):  # noqa: F811
    """The same with a Hadoop Streaming job on the local runner, four mappers at once: the run
    id is the job's, each worker its task's partition. Once all four publish to ZooKeeper, one
    mapper's target stops (connections refused from then on); the job ends early and
    successfully (aborted tasks succeed), every part file carries the abort note, and the job's
    last step, hammer stats --threshold over the parts, exits 3."""
    require_harness()
    failing = HammerServe()
    healthy = [HammerServe() for _ in range(3)]
    work = tmp_path / "hadoop"
    cluster = StreamingCluster("local", work)
    kazoo = zk._kazoo()

    def four_mappers_publish():
        runs = kazoo.get_children("/hadoop/hammer/runs") \
            if kazoo.exists("/hadoop/hammer/runs") else []
        workers = f"/hadoop/hammer/runs/{runs[0]}/workers" if len(runs) == 1 else None
        return workers is not None and kazoo.exists(workers) \
            and len(kazoo.get_children(workers)) == 4

    result = {}
    try:
        urls = tmp_path / "urls.txt"  # one line, one mapper
        urls.write_text("".join(u + "\n" for u in [failing.url("/"),
                                                   *[h.url("/") for h in healthy]]))
        started = time.monotonic()
        runner = threading.Thread(target=lambda: result.update(job=cluster.run("abort", [urls], [
                "-D", "mapreduce.map.maxattempts=1", "-D", "mapreduce.map.speculative=false",
                "-D", "mapreduce.job.reduces=0", "-D", "mapreduce.local.map.tasks.maximum=4",
                "-D", "mapreduce.input.lineinputformat.linespermap=1",
                "-inputformat", "org.apache.hadoop.mapred.lib.NLineInputFormat",
                "-mapper", f"{hammer_bin} load --loop -d 120s -r {RATE} -c 50 --emit partials "
                           f"--threshold {THRESHOLD} --abort-on-fail --abort-grace 2s "
                           f"--fleet {zk.url('/hadoop')}"])))
        runner.start()
        # Mid-run: every mapper is sending and publishing when worker 0's target goes away.
        wait_for(four_mappers_publish, timeout=90, what="four mappers publishing their figures")
        failing.stop()
        runner.join(timeout=150)
        assert not runner.is_alive(), "the job did not end"
        elapsed = time.monotonic() - started
        job = result["job"]
        assert job.rc == 0, f"{job.reply}\n{cluster.log_tail()}"
        assert elapsed < 100, elapsed  # not the mappers' 120 s
        parts = job.part_files()
        assert len(parts) == 4
        for part in parts:
            assert "(aborted)\t#hab1 threshold errors<5% failed on the fleet's figures" \
                in part.read_text(), part
        node = zk.get(f"/hadoop/hammer/runs/{job.job_id}/abort")
        assert f"threshold\t{THRESHOLD}\n" in node
        merged = run_hammer(["stats", "--threshold", THRESHOLD, *[str(p) for p in parts]])
        assert merged.returncode == 3, merged.stderr
        assert "the run was aborted (--abort-on-fail; 4 notes read)" in merged.stderr
    finally:
        cluster.close()
        remove_tree(work)
        for h in [failing, *healthy]:
            h.stop()


def test_alone_aborts_on_its_own_figures(tmp_path):
    target = HammerServe("--error-rate", "0.3")
    try:
        status, _ = wait_all([start_load(target.url("/"), tmp_path, "alone",
                                         ["--abort-on-fail", "--abort-grace", "1s"])])[0]
    finally:
        target.stop()
    stderr = (tmp_path / "alone.stderr").read_text()
    assert status == 3, stderr
    assert "aborted (--abort-on-fail): threshold errors<5% failed on this worker's figures" \
        in stderr
    summary = summary_of(tmp_path / "alone.json")
    jsonschema.validate(summary, SCHEMA)
    assert summary["aborted"] is True and summary["abort"]["fleet"] is False
    assert summary["abort"]["worker"] == 0
    assert 1 <= summary["seconds"] < 30
    # The thresholds list says the same at the end.
    assert [t["passed"] for t in summary["thresholds"]] == [False]


def test_a_passing_run_is_not_aborted(tmp_path):
    target = HammerServe()
    try:
        result = run_hammer(["load", target.url("/"), "-r", "100", "-d", "2s", "--emit", "none",
                             "--threshold", THRESHOLD, "--abort-on-fail", "--abort-grace", "0s",
                             "--summary-json", str(tmp_path / "s.json")])
    finally:
        target.stop()
    assert result.returncode == 0, result.stderr
    summary = summary_of(tmp_path / "s.json")
    assert summary["aborted"] is False and "abort" not in summary
    assert summary["requests"] >= 150


def test_zookeeper_out_of_reach_leaves_the_run_going(tmp_path):
    target = HammerServe()
    env = dict(os.environ, HAMMER_RUN_ID="no-zookeeper", HAMMER_WORKER_INDEX="1")
    try:
        with ClosedPort() as closed:
            result = run_hammer(
                ["load", target.url("/"), "-r", "100", "-d", "3s", "--emit", "none",
                 "--threshold", THRESHOLD, "--abort-on-fail", "--abort-grace", "1s",
                 "--fleet", f"zk://127.0.0.1:{closed.port}/x",
                 "--summary-json", str(tmp_path / "s.json")], env=env)
    finally:
        target.stop()
    assert result.returncode == 0, result.stderr
    summary = summary_of(tmp_path / "s.json")
    assert summary["aborted"] is False
    assert 2.9 <= summary["seconds"] < 4
    assert "ZOO_" not in result.stderr  # the C client's own log stays off stderr
    said = [line for line in result.stderr.splitlines() if "ZooKeeper" in line]
    assert len(said) == 1, result.stderr
    assert "figures not published to ZooKeeper at 127.0.0.1:" in said[0]


@pytest.mark.parametrize("args, error", [
    (["--fleet", "zk://127.0.0.1:9/x"], "--fleet needs --abort-on-fail"),
    (["--abort-grace", "5s"], "--abort-grace needs --abort-on-fail"),
    (["--abort-on-fail"], "--abort-on-fail needs a --threshold"),
    (["--abort-on-fail", "--threshold", "errors<1%", "--fleet", "http://h/x"], "--fleet:"),
])
def test_usage_errors(args, error):
    result = run_hammer(["load", "http://127.0.0.1:9/", "--dry-run", *args])
    assert result.returncode == 2
    assert error in result.stderr, result.stderr


def test_a_fleet_needs_a_run_id():
    # Refused before anything is sent (checked at start-up; --dry-run joins no fleet).
    env = {k: v for k, v in os.environ.items() if k not in ("HAMMER_RUN_ID", "mapreduce_job_id")}
    result = run_hammer(["load", "http://127.0.0.1:9/", "-n", "1", "--threshold", "errors<1%",
                         "--abort-on-fail", "--fleet", "zk://127.0.0.1:9/x"], env=env)
    assert result.returncode == 2
    assert "--fleet needs the run's id" in result.stderr, result.stderr
