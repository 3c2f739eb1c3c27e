"""The bulk seed's pipeline on Hadoop Streaming (local runner, Hadoop 3.4, JDK 17) into the real
3-node OpenSearch cluster: mapper `hammer route` (KEY = shard), the shuffle groups each shard's
documents, reducer `hammer bulk --from-route` sends them to the node holding that primary.
This is integrations/hadoop/run-bulk-index.sh's job, with the same flags.

Checked through the job's own counter API (group hammer_bulk, written by `hammer bulk` as
reporter:counter lines): documents read = indexed = the valid input, none dead-lettered by bulk,
no bulk request to a node without the shard's primary; the index count equals the input; the
two bad lines are in the mappers' dead-letter files with their reasons.

Needs java 17 + mvn (hadoop_harness.py, opensearch.py).
"""
import json
import random
import shutil
import tempfile
from pathlib import Path

from bulk_support import random_key
from hadoop_harness import StreamingCluster, remove_tree, require_harness
from harness import HAMMER
from opensearch import opensearch_cluster  # noqa: F401  (session fixture)


SHARDS, DOCUMENTS = 6, 20_000


def test_hadoop_route_shuffle_bulk_into_opensearch(opensearch_cluster, tmp_path):
    c = opensearch_cluster
    c.request("DELETE", "/hadoop-bulk")
    status, body = c.request("PUT", "/hadoop-bulk", {"settings": {
        "number_of_shards": SHARDS, "number_of_replicas": 0, "refresh_interval": "-1"}})
    assert status == 200, body
    hammer = str(tmp_path / "hammer")
    shutil.copy2(HAMMER, hammer)
    cluster_urls = ",".join(n.url for n in c.nodes.values() if n.running)

    rng = random.Random(5)
    ids = set()
    while len(ids) < DOCUMENTS:
        ids.add(random_key(rng))
    lines = [json.dumps({"id": i, "n": k}, ensure_ascii=k % 2 == 0) for k, i in enumerate(ids)]
    lines[10:10] = ["not json", '{"no id": 1}']
    docs = tmp_path / "docs.jsonl"
    docs.write_text("\n".join(lines) + "\n")
    dead = tmp_path / "dead"
    dead.mkdir()

    require_harness()
    work = Path(tempfile.mkdtemp(prefix="hammer-hadoop-bulk-"))
    try:
        with StreamingCluster("local", work) as hadoop:
            args = ["-D", "mapreduce.map.maxattempts=1", "-D", "mapreduce.reduce.maxattempts=1",
                    "-D", "mapreduce.job.reduces=3",
                    "-D", "mapreduce.input.fileinputformat.split.maxsize=400000",
                    "-mapper", f"{hammer} route --cluster {cluster_urls} --index hadoop-bulk "
                               f"--id-field id -q --dead-letter {dead}/route-{{pid}}.jsonl",
                    "-reducer", f"{hammer} bulk --cluster {cluster_urls} --index hadoop-bulk "
                                f"--from-route --id-field id -q --hadoop --summary-json - "
                                f"--dead-letter {dead}/bulk-{{pid}}.jsonl"]
            job = hadoop.run("bulk", [docs], args)
            assert job.rc == 0, f"{job.reply}\n{hadoop.log_tail()}"
            counters = job.counter_group("hammer_bulk")
            summaries = [json.loads(line) for line in job.part_lines()]
    finally:
        remove_tree(work)

    print(counters)
    assert counters["documents_read"] == DOCUMENTS
    assert counters["indexed"] == DOCUMENTS
    assert counters.get("dead_lettered", 0) == 0
    assert counters.get("requests_off_primary", 0) == 0
    # Each reducer's summary is its output; together they say the same as the counters.
    assert len(summaries) == 3 and all(s["balanced"] for s in summaries)
    assert sum(s["indexed"] for s in summaries) == DOCUMENTS
    route_letters = [json.loads(l) for p in dead.glob("route-*.jsonl")
                     for l in p.read_text().splitlines()]
    assert sorted(l["reason"].split(":")[0] for l in route_letters) == \
        ["invalid JSON", 'missing id field "id"']
    c.request("POST", "/hadoop-bulk/_refresh")
    status, body = c.request("GET", "/hadoop-bulk/_count")
    assert status == 200 and body["count"] == DOCUMENTS
    c.request("DELETE", "/hadoop-bulk")
