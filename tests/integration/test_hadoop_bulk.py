"""The bulk seed's pipeline on Hadoop Streaming (local runner, Hadoop 3.4, JDK 17) into the real
3-node OpenSearch cluster: mapper `hammer route` (KEY = shard), the shuffle groups each shard's
documents, reducer `hammer bulk --from-route` sends them to the node holding that primary.
This is integrations/hadoop/run-bulk-index.sh's job, with the same flags.

Checked through the job's own counter API (group hammer_bulk, written by `hammer bulk` as
reporter:counter lines): documents read = indexed = the valid input, none dead-lettered by bulk,
no bulk request to a node without the shard's primary; the index count equals the input; the
bad line is in the mappers' dead-letter files with its reason.

One document in ten has no "id": the mapper's --id-from-position gives it FILE:START:LINE, its
split (Hadoop's mapreduce_map_input_file and _start) and its line in the split. The whole job
runs twice on the same input path, as a re-run would: the second run overwrites every document
(each at _version 2) and the index still holds one per input line.

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
    lines = [json.dumps({"id": i, "n": k} if k % 10 else {"n": k}, ensure_ascii=k % 2 == 0)
             for k, i in enumerate(ids)]
    with_id = {i for k, i in enumerate(ids) if k % 10}
    lines[10:10] = ["not json"]
    docs = tmp_path / "docs.jsonl"
    docs.write_text("\n".join(lines) + "\n")
    dead = tmp_path / "dead"
    dead.mkdir()

    require_harness()
    work = Path(tempfile.mkdtemp(prefix="hammer-hadoop-bulk-"))
    runs = []
    try:
        with StreamingCluster("local", work) as hadoop:
            for run in range(2):
                args = ["-D", "mapreduce.map.maxattempts=1", "-D", "mapreduce.reduce.maxattempts=1",
                        "-D", "mapreduce.job.reduces=3",
                        "-mapper", f"{hammer} route --cluster {cluster_urls} --index hadoop-bulk "
                                   f"--id-field id --id-from-position -q "
                                   f"--dead-letter {dead}/route-{run}-{{pid}}.jsonl",
                        "-reducer", f"{hammer} bulk --cluster {cluster_urls} --index hadoop-bulk "
                                    f"--from-route -q --hadoop --summary-json - "
                                    f"--dead-letter {dead}/bulk-{run}-{{pid}}.jsonl"]
                # The same job name: the same input path (jobs/bulk/in/docs.jsonl), as a re-run
                # of one job reads; a copy elsewhere would be another input, with other ids.
                job = hadoop.run("bulk", [docs], args)
                assert job.rc == 0, f"{job.reply}\n{hadoop.log_tail()}"
                runs.append((job.counter_group("hammer_bulk"),
                             [json.loads(line) for line in job.part_lines()]))
    finally:
        remove_tree(work)
    counters, summaries = runs[0]

    print(counters)
    assert counters["documents_read"] == DOCUMENTS
    assert counters["indexed"] == DOCUMENTS
    assert counters.get("dead_lettered", 0) == 0
    assert counters.get("requests_off_primary", 0) == 0
    # Each reducer's summary is its output; together they say the same as the counters.
    assert len(summaries) == 3 and all(s["balanced"] for s in summaries)
    assert sum(s["indexed"] for s in summaries) == DOCUMENTS
    route_letters = [json.loads(l) for p in dead.glob("route-0-*.jsonl")
                     for l in p.read_text().splitlines()]
    assert [l["reason"].split(":")[0] for l in route_letters] == ["invalid JSON"]
    # The re-run: the same counts again.
    rerun = runs[1][0]
    assert (rerun["documents_read"], rerun["indexed"], rerun.get("dead_lettered", 0)) == \
        (DOCUMENTS, DOCUMENTS, 0), rerun
    c.request("POST", "/hadoop-bulk/_refresh")
    status, body = c.request("GET", "/hadoop-bulk/_count")
    assert status == 200 and body["count"] == DOCUMENTS

    # Every document once, each written by both runs; the documents without "id" named by
    # their split and line, over several splits.
    found = {}
    status, page = c.request("POST", "/hadoop-bulk/_search?scroll=1m", {
        "size": 5000, "sort": ["_doc"], "_source": False, "version": True})
    while status == 200 and page["hits"]["hits"]:
        found.update((hit["_id"], hit["_version"]) for hit in page["hits"]["hits"])
        status, page = c.request("POST", "/_search/scroll",
                                 {"scroll": "1m", "scroll_id": page["_scroll_id"]})
    assert status == 200, page
    assert len(found) == DOCUMENTS and set(found.values()) == {2}
    positional = set(found) - with_id
    assert len(positional) == DOCUMENTS - len(with_id)
    starts = set()
    for doc_id in positional:
        # mapreduce_map_input_file is the split's file as a URI: the job's copy of the input,
        # file:/tmp/.../jobs/bulk/in/docs.jsonl
        source, start, line = doc_id.rsplit(":", 2)
        assert source.startswith("file:/") and source.endswith("/jobs/bulk/in/docs.jsonl"), doc_id
        assert int(start) >= 0 and int(line) >= 1, doc_id
        starts.add(int(start))
    print(f"{len(positional)} documents named by position, over {len(starts)} splits; "
          f"e.g. {sorted(positional)[0]}")
    c.request("DELETE", "/hadoop-bulk")
