"""hammer as a real Hadoop Streaming mapper, combiner and reducer (Hadoop 3.4, JDK 17).

Every test runs twice: on Hadoop's local runner (LocalJobRunner, file://) and on a MiniDFSCluster
(1 datanode) + MiniMRYarnCluster (1 NodeManager), both started in one JVM by
integrations/jvm/hadoop-streaming, which submits jobs with ToolRunner.run(conf, new StreamJob(),
args) and reads the job's counters back through Hadoop's counter API.

Input: a weighted, shuffled URL list against `hammer serve` and nginx (successes, a delayed
route, HTTP 500, HTTP 404, a 200 whose body matches the error pattern, a closed port), split into
4 map tasks by NLineInputFormat (the mapper sees Hadoop's `OFFSET<TAB>URL` lines).

Jobs per mode (the mini cluster is started once per mode):
- pipeline: mapper `hammer load -c 10`, combiner `hammer stats --combine`, reducer
  `hammer stats --reducer`: the error counter group equals the failures in the input, by type;
  per-URL success and error counts equal the input's occurrences.
- records: the same mapper, map-only (`mapreduce.job.reduces=0`): the raw records of 4 map
  tasks, and the same counters.
- merge: the records job's 4 part files as input (4 map tasks), identity mapper `cat`, combiner
  and reducer as above. Its output must equal, byte for byte (sums, percentiles, histogram),
  `hammer stats --reducer` run in one process over the same records. This is how latencies,
  which differ from run to run, are compared exactly: both sides aggregate the very same
  recorded records, one through 4 mappers' partials, the shuffle and the reducer's merge, the
  other in one pass.
- partials: mapper `hammer load -c 10 --emit partials` (one partial per key and task), no
  combiner, reducer as above: counters and per-URL counts.
- retried: the partials job with each map task's first attempt failing (exit 1) after it sent its
  requests and wrote its partials: on YARN the second attempt's output alone is reduced, so the
  counts are one attempt's while hammer serve received both; LocalJobRunner does not retry.
- env: mapper /usr/bin/env, map-only, 2 tasks: the variables that identify a task.

Needs java 17 and mvn (the harness is built by scripts/jvm-deps.sh on first use), and nginx.
"""
import collections
import random
import subprocess
import tempfile
from pathlib import Path

import pytest

from hadoop_harness import StreamingCluster, remove_tree, require_harness
from harness import ClosedPort, HammerServe, Nginx

MAPS = 4
COMMON_D = ["-D", "mapreduce.map.maxattempts=1", "-D", "mapreduce.reduce.maxattempts=1",
            "-D", "mapreduce.map.speculative=false", "-D", "mapreduce.reduce.speculative=false"]
REDUCER_COLUMNS = 12  # key sum average max min errors count p50 p90 p99 p99.9 histogram


@pytest.fixture(scope="module")
def servers():
    """`hammer serve`, nginx, and a refused port (ClosedPort), for the whole module."""
    with ClosedPort() as dead:
        serve = HammerServe("--threads", "2")
        try:
            nginx = Nginx()
            try:
                yield serve, nginx, dead.port
            finally:
                nginx.stop()
        finally:
            serve.stop()


@pytest.fixture(scope="module")
def workload(servers, tmp_path_factory):
    """The weighted URL file and what every URL should give: (occurrences, error type)."""
    serve, nginx, dead = servers
    plan = {
        serve.url("/"): (30, None),
        serve.url("/delay/3"): (12, None),
        nginx.url("/"): (30, None),
        serve.url("/status/500"): (6, "http_5xx"),
        nginx.url("/status/404"): (4, "http_4xx"),
        nginx.url("/error-content"): (5, "errorlike_content"),
        f"http://127.0.0.1:{dead}/": (3, "connect"),
    }
    lines = [url for url, (n, _) in plan.items() for _ in range(n)]
    random.Random(20240611).shuffle(lines)
    path = tmp_path_factory.mktemp("hadoop-input") / "urls.txt"
    path.write_text("".join(line + "\n" for line in lines))
    per_map = -(-len(lines) // MAPS)  # ceil: exactly MAPS splits
    return {"path": path, "plan": plan, "lines": lines, "per_map": per_map}


def expected_errors(plan):
    errors = collections.Counter()
    for n, kind in plan.values():
        if kind:
            errors[kind] += n
    return dict(errors)


@pytest.fixture(scope="module", params=["local", "mini"])
def hadoop(request):
    require_harness()
    work = Path(tempfile.mkdtemp(prefix=f"hammer-hadoop-{request.param}-"))
    cluster = StreamingCluster(request.param, work)
    try:
        yield cluster
    finally:
        cluster.close()
        if request.node.session.testsfailed:
            print(f"hadoop {request.param} work dir kept: {work}")
        else:
            remove_tree(work)


def nline(workload):
    return ["-D", f"mapreduce.input.lineinputformat.linespermap={workload['per_map']}",
            "-inputformat", "org.apache.hadoop.mapred.lib.NLineInputFormat"]


def check(job, cluster):
    assert job.rc == 0, (f"{job.name} failed (rc={job.rc}): {job.reply}\n"
                         f"{cluster.log_tail()}")
    assert "_SUCCESS" in job.files
    # hammer stats reports unparsable lines as counter stats/malformed: there must be none.
    assert job.counter_group("stats") == {}, job.counters["stats"]
    return job


@pytest.fixture(scope="module")
def pipeline_job(hadoop, workload, hammer_bin):
    args = [*COMMON_D, "-D", "mapreduce.job.reduces=1", *nline(workload),
            "-mapper", f"{hammer_bin} load -c 10",
            "-combiner", f"{hammer_bin} stats --combine",
            "-reducer", f"{hammer_bin} stats --reducer"]
    return check(hadoop.run("pipeline", [workload["path"]], args), hadoop)


@pytest.fixture(scope="module")
def records_job(hadoop, workload, hammer_bin):
    args = [*COMMON_D, "-D", "mapreduce.job.reduces=0", *nline(workload),
            "-mapper", f"{hammer_bin} load -c 10"]
    return check(hadoop.run("records", [workload["path"]], args), hadoop)


@pytest.fixture(scope="module")
def merge_job(hadoop, records_job, hammer_bin):
    parts = records_job.part_files()
    assert len(parts) == MAPS
    args = [*COMMON_D, "-D", "mapreduce.job.reduces=1",
            "-mapper", "/bin/cat",
            "-combiner", f"{hammer_bin} stats --combine",
            "-reducer", f"{hammer_bin} stats --reducer"]
    return check(hadoop.run("merge", parts, args), hadoop)


@pytest.fixture(scope="module")
def partials_job(hadoop, workload, hammer_bin):
    args = [*COMMON_D, "-D", "mapreduce.job.reduces=1", *nline(workload),
            "-mapper", f"{hammer_bin} load -c 10 --emit partials",
            "-reducer", f"{hammer_bin} stats --reducer"]
    return check(hadoop.run("partials", [workload["path"]], args), hadoop)


@pytest.fixture(scope="module")
def retried_job(hadoop, workload, hammer_bin, servers, tmp_path_factory):
    """The partials job with every map task's first attempt failing after it sent its requests
    and wrote its partials (exit 1): Hadoop runs a second attempt and keeps its output only.
    Returns (the job, the requests hammer serve received meanwhile)."""
    mapper = tmp_path_factory.mktemp("retried-mapper") / "mapper.sh"
    mapper.write_text(f'#!/bin/sh\n"{hammer_bin}" load -c 10 --emit partials || exit\n'
                      'case "$mapreduce_task_attempt_id" in *_0) exit 1;; esac\n')
    mapper.chmod(0o755)
    serve = servers[0]
    before = serve.stats()["requests"]
    args = ["-D", "mapreduce.map.maxattempts=2", "-D", "mapreduce.reduce.maxattempts=1",
            "-D", "mapreduce.map.speculative=false", "-D", "mapreduce.reduce.speculative=false",
            "-D", "mapreduce.job.reduces=1", *nline(workload),
            "-mapper", str(mapper), "-reducer", f"{hammer_bin} stats --reducer"]
    job = hadoop.run("retried", [workload["path"]], args)
    return job, serve.stats()["requests"] - before


def reducer_rows(lines):
    rows = {}
    for line in lines:
        cols = line.split("\t")
        assert len(cols) == REDUCER_COLUMNS, f"reducer line with {len(cols)} columns: {line!r}"
        assert cols[0] not in rows, f"key {cols[0]} twice in the reducer output"
        rows[cols[0]] = cols
    return rows


def single_process_reducer(hammer_bin, records_bytes):
    """`hammer stats --reducer` over records sorted like Hadoop's shuffle (bytes of the key)."""
    lines = [line for line in records_bytes.split(b"\n") if line]
    lines.sort(key=lambda line: line.split(b"\t", 1)[0])
    proc = subprocess.run([hammer_bin, "stats", "--reducer"], input=b"".join(l + b"\n" for l in lines),
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout


# --- the load pipeline: mapper + combiner + reducer in one job ---------------------------------

def test_pipeline_error_counters_equal_failures_in_input(pipeline_job, workload):
    assert pipeline_job.counter_group("error") == expected_errors(workload["plan"])


def test_pipeline_per_url_counts_equal_input_occurrences(pipeline_job, workload):
    rows = reducer_rows(pipeline_job.part_lines())
    assert set(rows) == set(workload["plan"])
    for url, (n, kind) in workload["plan"].items():
        cols = rows[url]
        errors, count = int(cols[5]), int(cols[6])
        if kind:
            assert (errors, count) == (n, 0), (url, cols)
        else:
            assert (errors, count) == (0, n), (url, cols)
            p50, p90, p99, p999 = (float(c) for c in cols[7:11])
            mx, mn = float(cols[3]), float(cols[4])
            # Percentiles are HdrHistogram bucket values (highest equivalent value, 3
            # significant digits), so they may pass the exact max by less than 0.1%.
            assert 0 < mn <= p50 <= p90 <= p99 <= p999 <= mx * 1.001 + 1e-6, (url, cols)
            assert cols[11].startswith("HISTF"), (url, cols)


def test_pipeline_ran_four_maps_combined_and_reduced_partials(pipeline_job, workload):
    tc = pipeline_job.task_counter
    assert tc("MAP_INPUT_RECORDS") == len(workload["lines"])
    assert tc("MAP_OUTPUT_RECORDS") == len(workload["lines"])  # one record per request
    assert tc("SHUFFLED_MAPS") == MAPS
    # The combiner ran over every record, and the reducer saw only its partials.
    assert tc("COMBINE_INPUT_RECORDS") == len(workload["lines"])
    assert tc("REDUCE_INPUT_RECORDS") == tc("COMBINE_OUTPUT_RECORDS")
    assert MAPS < tc("COMBINE_OUTPUT_RECORDS") <= MAPS * len(workload["plan"])
    assert tc("REDUCE_OUTPUT_RECORDS") == len(workload["plan"])
    if pipeline_job.counters.get("org.apache.hadoop.mapreduce.JobCounter"):  # YARN only
        jc = pipeline_job.counter_group("org.apache.hadoop.mapreduce.JobCounter")
        assert jc["TOTAL_LAUNCHED_MAPS"] == MAPS
        assert jc["TOTAL_LAUNCHED_REDUCES"] == 1
        assert "NUM_UBER_SUBMAPS" not in jc  # real containers, not the AM's uber mode


# --- mapper writing partials itself (--emit partials), no combiner ----------------------------

def test_emit_partials_mapper(partials_job, workload):
    assert partials_job.counter_group("error") == expected_errors(workload["plan"])
    tc = partials_job.task_counter
    assert tc("MAP_INPUT_RECORDS") == len(workload["lines"])
    # One partial per key and map task, instead of one record per request.
    lines, per_map = workload["lines"], workload["per_map"]
    keys_per_split = sum(len(set(lines[i:i + per_map])) for i in range(0, len(lines), per_map))
    assert tc("MAP_OUTPUT_RECORDS") == keys_per_split
    rows = reducer_rows(partials_job.part_lines())
    assert set(rows) == set(workload["plan"])
    for url, (n, kind) in workload["plan"].items():
        assert (int(rows[url][5]), int(rows[url][6])) == ((n, 0) if kind else (0, n)), rows[url]


# --- map attempts that failed and were retried -------------------------------------------------

def test_retried_map_attempts_count_once(hadoop, retried_job, workload, servers):
    job, received = retried_job
    if hadoop.mode == "local":
        # LocalJobRunner runs each task once: a failed attempt fails the job, with no output.
        assert job.rc != 0 and "_SUCCESS" not in job.files
        assert "Job not successful" in hadoop.log_tail()
        return
    check(job, hadoop)
    serve = servers[0]
    # Both attempts of every task really sent their requests...
    served = sum(n for url, (n, _) in workload["plan"].items() if url.startswith(serve.url("")))
    assert received == 2 * served
    # ...and the job's figures are one attempt's: per URL, and in the error counters.
    rows = reducer_rows(job.part_lines())
    for url, (n, kind) in workload["plan"].items():
        assert (int(rows[url][5]), int(rows[url][6])) == ((n, 0) if kind else (0, n)), rows[url]
    assert job.counter_group("error") == expected_errors(workload["plan"])
    if job.counters.get("org.apache.hadoop.mapreduce.JobCounter"):  # YARN only
        jc = job.counter_group("org.apache.hadoop.mapreduce.JobCounter")
        assert jc["NUM_FAILED_MAPS"] == MAPS
        assert jc["TOTAL_LAUNCHED_MAPS"] == 2 * MAPS


# --- raw records of 4 map tasks ---------------------------------------------------------------

def test_mapper_records_and_counters(records_job, workload):
    parts = records_job.part_files()
    assert len(parts) == MAPS
    records = records_job.part_lines()
    assert len(records) == len(workload["lines"])
    by_url = collections.Counter()
    for record in records:
        url, value = record.split("\t", 1)
        kind = workload["plan"][url][1]
        if kind:
            assert value == "", record
        else:
            assert float(value) > 0, record
        by_url[url] += 1
    assert dict(by_url) == {url: n for url, (n, _) in workload["plan"].items()}
    assert records_job.counter_group("error") == expected_errors(workload["plan"])
    # Each map task sent the URLs of one NLineInputFormat split (tasks are numbered by split
    # size, largest first, so compare the splits as a multiset).
    lines, per_map = workload["lines"], workload["per_map"]
    splits = [lines[i:i + per_map] for i in range(0, len(lines), per_map)]

    def canonical(groups):
        return sorted(sorted(collections.Counter(g).items()) for g in groups)
    tasks = [[line.split("\t", 1)[0] for line in p.read_text().splitlines()] for p in parts]
    assert canonical(tasks) == canonical(splits)


# --- exact aggregation: 4 mappers' partials vs one process ------------------------------------

def test_merge_job_used_four_mappers_and_partials(merge_job, records_job, workload):
    tc = merge_job.task_counter
    assert tc("MAP_INPUT_RECORDS") == len(workload["lines"])
    assert tc("SHUFFLED_MAPS") == MAPS
    assert tc("COMBINE_INPUT_RECORDS") == len(workload["lines"])
    assert tc("REDUCE_INPUT_RECORDS") == tc("COMBINE_OUTPUT_RECORDS")
    assert tc("COMBINE_OUTPUT_RECORDS") > len(workload["plan"])  # keys split across mappers


def test_distributed_reducer_equals_single_process_byte_for_byte(merge_job, records_job,
                                                                 hammer_bin):
    expected = single_process_reducer(hammer_bin, records_job.part_bytes())
    assert merge_job.part_bytes() == expected


def test_histograms_and_percentiles_of_four_mappers_equal_one_process(merge_job, records_job,
                                                                      workload, hammer_bin):
    expected = reducer_rows(single_process_reducer(hammer_bin, records_job.part_bytes()).decode()
                            .splitlines())
    got = reducer_rows(merge_job.part_lines())
    assert set(got) == set(expected) == set(workload["plan"])
    for url in expected:
        # p50 p90 p99 p99.9 and the encoded histogram column.
        assert got[url][7:12] == expected[url][7:12], url
        assert got[url][5:7] == expected[url][5:7], url  # errors, count


def test_merged_counts_equal_input(merge_job, workload):
    rows = reducer_rows(merge_job.part_lines())
    for url, (n, kind) in workload["plan"].items():
        assert int(rows[url][5]) + int(rows[url][6]) == n, rows[url]
        assert int(rows[url][5]) == (n if kind else 0), rows[url]


# --- what a mapper can learn about its task ---------------------------------------------------

TASK_VARS = ("mapreduce_job_id", "mapreduce_task_id", "mapreduce_task_attempt_id",
             "mapreduce_task_partition", "mapreduce_task_ismap", "mapreduce_map_input_file",
             "mapreduce_map_input_start", "mapreduce_map_input_length", "mapreduce_job_maps")


def test_task_environment(hadoop, workload, tmp_path):
    urls = tmp_path / "env-input.txt"
    urls.write_text("".join(f"line {i}\n" for i in range(4)))
    args = [*COMMON_D, "-D", "mapreduce.job.reduces=0",
            "-D", "mapreduce.input.lineinputformat.linespermap=2",
            "-inputformat", "org.apache.hadoop.mapred.lib.NLineInputFormat",
            "-mapper", "/usr/bin/env"]
    job = check(hadoop.run("env", [urls], args), hadoop)
    parts = job.part_files()
    assert len(parts) == 2
    for i, part in enumerate(parts):
        env = {}
        for line in part.read_text().splitlines():
            name, sep, value = line.rstrip("\t").partition("=")
            if sep and name.isidentifier():
                env[name] = value
        missing = [v for v in TASK_VARS if v not in env]
        assert not missing, f"{part.name}: no {missing}"
        assert env["mapreduce_task_partition"] == str(i)
        assert env["mapreduce_task_ismap"] == "true"
        assert env["mapreduce_job_id"] == job.job_id
        assert env["mapreduce_task_id"].endswith(f"_m_{i:06d}")
        assert env["mapreduce_task_attempt_id"].startswith("attempt_")
        assert env["mapreduce_task_attempt_id"].endswith(f"_m_{i:06d}_0")
        assert env["mapreduce_job_maps"] == "2"
        if hadoop.mode == "mini":  # a YARN container, not a thread of the local runner
            assert env["CONTAINER_ID"].startswith("container_")
            assert env["mapreduce_framework_name"] == "yarn"


# --- hammer stats' own counter, through the reducer ---------------------------------------

# The reporter path from a task to the job counters is covered on YARN by the mappers' error
# counters; one local job suffices here.
@pytest.mark.parametrize("hadoop", ["local"], indirect=True)
def test_reducer_reports_malformed_lines_as_counter(hadoop, hammer_bin, tmp_path):
    records = tmp_path / "records.tsv"
    records.write_text("http://a/\t0.001\nhttp://a/\tbogus\nhttp://a/\t-1\nhttp://b/\t\n")
    args = [*COMMON_D, "-D", "mapreduce.job.reduces=1",
            "-mapper", "/bin/cat", "-reducer", f"{hammer_bin} stats --reducer"]
    job = hadoop.run("malformed", [records], args)
    assert job.rc == 0, job.reply
    assert job.counter_group("stats") == {"malformed": 2}
    rows = reducer_rows(job.part_lines())
    assert (rows["http://a/"][5], rows["http://a/"][6]) == ("0", "1")
    assert (rows["http://b/"][5], rows["http://b/"][6]) == ("1", "0")
