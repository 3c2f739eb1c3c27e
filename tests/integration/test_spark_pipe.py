"""hammer under Spark's RDD.pipe() (pyspark 3.5, local[2], JDK 17).

A weighted, shuffled URL list against `hammer serve` (successes, a delayed route, HTTP 500, a 200
whose body matches the error pattern, a closed port) is split into 4 partitions; each partition
pipes through its own `hammer load -c 5` process. The records are collected once, then:
- counted per URL against the input (successes carry a latency, failures an empty value);
- reduced by `hammer stats --reducer` in one process (sorted like a shuffle): per-URL success
  and error counts equal the input's occurrences;
- piped a second time inside Spark: spread over 3 partitions with no regard to key,
  `hammer stats --combine` per partition, and the partials merged by `hammer stats --reducer`,
  which must equal the single-process reducer byte for byte.
A failing command (non-zero exit) must fail the Spark job when checkCode=True.

Needs pyspark (tests/integration/requirements.txt; scripts/jvm-deps.sh installs it).
"""
import collections
import os
import random
import subprocess

import pytest

from harness import ClosedPort, HammerServe
from spark_session import spark_context

PARTITIONS = 4


@pytest.fixture(scope="module")
def sc():
    with spark_context("hammer-pipe-it", cores=2) as context:
        yield context


@pytest.fixture(scope="module")
def serve():
    server = HammerServe("--threads", "2")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def dead_port():
    with ClosedPort() as port:
        yield port.port


@pytest.fixture(scope="module")
def workload(serve, dead_port):
    dead = dead_port
    plan = {
        serve.url("/"): (40, None),
        serve.url("/delay/2"): (15, None),
        serve.url("/status/500"): (7, "http_5xx"),
        serve.url("/error-content"): (5, "errorlike_content"),
        f"http://127.0.0.1:{dead}/": (3, "connect"),
    }
    lines = [url for url, (n, _) in plan.items() for _ in range(n)]
    random.Random(7).shuffle(lines)
    return plan, lines


@pytest.fixture(scope="module")
def records(sc, workload, hammer_bin):
    _, lines = workload
    rdd = sc.parallelize(lines, PARTITIONS)
    # PySpark's pipe starts the command without a shell and with only `env` as environment.
    piped = rdd.pipe(f"{hammer_bin} load -c 5", env=dict(os.environ), checkCode=True)
    return piped.glom().collect()  # one list of records per partition


@pytest.fixture(scope="module")
def input_partitions(sc, workload):
    _, lines = workload
    return sc.parallelize(lines, PARTITIONS).glom().collect()  # no hammer involved


def reducer(hammer_bin, lines):
    data = "".join(line + "\n" for line in sorted(lines, key=lambda l: l.split("\t", 1)[0]
                                                  .encode()))
    proc = subprocess.run([hammer_bin, "stats", "--reducer"], input=data.encode(),
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout.decode()


def test_every_partition_ran_its_own_hammer(records, input_partitions):
    assert len(records) == len(input_partitions) == PARTITIONS
    for i, (urls_in, part) in enumerate(zip(input_partitions, records)):
        urls = [r.split("\t", 1)[0] for r in part]
        assert collections.Counter(urls) == collections.Counter(urls_in), i


def test_records_per_url_equal_input(records, workload):
    plan, lines = workload
    flat = [r for part in records for r in part]
    assert len(flat) == len(lines)
    by_url = collections.Counter()
    for record in flat:
        url, sep, value = record.partition("\t")
        assert sep == "\t", record
        if plan[url][1]:
            assert value == "", record
        else:
            assert float(value) > 0, record
        by_url[url] += 1
    assert dict(by_url) == {url: n for url, (n, _) in plan.items()}


def test_reducer_counts_equal_input(records, workload, hammer_bin):
    plan, _ = workload
    out = reducer(hammer_bin, [r for part in records for r in part])
    rows = {cols[0]: cols for cols in (line.split("\t") for line in out.splitlines())}
    assert set(rows) == set(plan)
    for url, (n, kind) in plan.items():
        errors, count = int(rows[url][5]), int(rows[url][6])
        assert (errors, count) == ((n, 0) if kind else (0, n)), rows[url]


def test_spark_combine_stage_merges_exactly(sc, records, hammer_bin):
    flat = [r for part in records for r in part]
    expected = reducer(hammer_bin, flat)
    # Round-robin over 3 partitions: every URL is split across partitions, each partition's
    # hammer sees its records unsorted and writes one partial per key.
    partials = (sc.parallelize(flat, 3)
                .pipe(f"{hammer_bin} stats --combine", env=dict(os.environ), checkCode=True)
                .collect())
    keys = collections.Counter(p.split("\t", 1)[0] for p in partials)
    assert max(keys.values()) > 1, "no key was split across partitions"
    assert all("\t#hp1 " in p for p in partials), partials[:3]
    assert reducer(hammer_bin, partials) == expected


def test_non_zero_exit_fails_the_job(sc, hammer_bin):
    from py4j.protocol import Py4JJavaError
    with pytest.raises(Py4JJavaError) as err:
        sc.parallelize(["x"], 1).pipe(f"{hammer_bin} load --no-such-flag",
                                      env=dict(os.environ), checkCode=True).collect()
    # hammer exits 2 on a usage error; PySpark's pipe turns it into PIPE_FUNCTION_EXITED.
    assert "exited with error code 2" in str(err.value)
