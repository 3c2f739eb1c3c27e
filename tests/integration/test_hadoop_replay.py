"""A capture replayed by a Hadoop Streaming job of 4 map tasks (issue 47, item 5).

Hadoop's local runner (LocalJobRunner, 4 maps at once: mapreduce.local.map.tasks.maximum) runs
`hammer load --replay --split-by connection` in each map task: the task's part comes from
Hadoop's own task partition and map count (mapreduce_task_partition, mapreduce_job_maps), the
job's input is only 4 lines, one per task (NLineInputFormat), and every task reads the whole
capture from a path on this machine, as a job would from a file shipped with -files. The
requests nginx logged are the capture's, each once; each task's records are its part, and a
connection's requests all came from one task.

Needs java 17 and the Hadoop Streaming harness (scripts/jvm-deps.sh hadoop), and nginx.
"""
import collections
import json
import tempfile
import time
from pathlib import Path

import pytest

from hadoop_harness import StreamingCluster, remove_tree, require_harness
from logged_nginx import LoggedNginx

MAPS = 4
ENTRIES = 160
CONNECTIONS = 12


@pytest.fixture(scope="module")
def local_hadoop():
    require_harness()
    work = Path(tempfile.mkdtemp(prefix="hammer-hadoop-replay-"))
    cluster = StreamingCluster("local", work)
    try:
        yield cluster
    finally:
        cluster.close()
        remove_tree(work)


def test_four_map_tasks_replay_the_whole_capture_each_entry_once(local_hadoop, start_nginx,
                                                                 serve, hammer_bin, tmp_path):
    base = 1_796_666_400_000_000
    capture = tmp_path / "capture.jsonl"
    capture.write_text("".join(
        json.dumps({"method": "GET", "url": f"https://prod.example/item/{i}?c={i % CONNECTIONS}",
                    "ts": base + i * 10_000, "conn": i % CONNECTIONS}) + "\n"
        for i in range(ENTRIES)))
    logged = LoggedNginx(start_nginx, serve, tmp_path)
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("".join(f"task {i}\n" for i in range(MAPS)))
    mapper = tmp_path / "replay-mapper.sh"
    # The task's input (its line of tasks.txt) is read and dropped: the capture is the work.
    mapper.write_text(
        "#!/bin/sh\ncat >/dev/null\n"
        f"exec {hammer_bin} load --targets-format jsonl --replay --split-by connection "
        f"--start-at {time.time() + 5:.3f} --base-url {logged.url()} -c 8 {capture}\n")
    mapper.chmod(0o755)
    args = ["-D", "mapreduce.map.maxattempts=1", "-D", "mapreduce.map.speculative=false",
            "-D", "mapreduce.job.reduces=0", "-D", f"mapreduce.local.map.tasks.maximum={MAPS}",
            "-D", "mapreduce.input.lineinputformat.linespermap=1",
            "-inputformat", "org.apache.hadoop.mapred.lib.NLineInputFormat",
            "-mapper", str(mapper)]
    job = local_hadoop.run("replay", [tasks], args)
    assert job.rc == 0, f"replay job failed (rc={job.rc}): {job.reply}\n{local_hadoop.log_tail()}"
    parts = job.part_files()
    assert len(parts) == MAPS
    task_of = {}
    for task, part in enumerate(parts):
        urls = [line.split("\t")[0] for line in part.read_text().splitlines()]
        assert urls, f"{part.name} sent nothing"
        for url in urls:
            assert url not in task_of, f"{url} sent by tasks {task_of[url]} and {task}"
            task_of[url] = task
    assert len(task_of) == ENTRIES
    received = sorted(e["u"] for e in logged.log.entries())
    assert received == sorted(f"/item/{i}?c={i % CONNECTIONS}" for i in range(ENTRIES))
    tasks_of_connection = collections.defaultdict(set)
    for url, task in task_of.items():
        tasks_of_connection[url.rsplit("?c=", 1)[1]].add(task)
    assert all(len(t) == 1 for t in tasks_of_connection.values()), tasks_of_connection
