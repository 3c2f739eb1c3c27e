"""The bulk seed's Spark pipeline, for real: pyspark local[2] runs integrations/spark/bulk_index.py
(documents -> pipe(`hammer route`) -> partitionBy(shard key, K partitions per shard) ->
pipe(`hammer bulk --from-route`)) into the real 3-node OpenSearch cluster of test_bulk.py.

Checked: the index count equals the valid input; every line is accounted for (indexed, or in a
route or bulk dead-letter file with its reason); each bulk partition held one shard's documents
only, so no bulk request reached a node without that shard's primary; and the documents live on
the shard hammer computed (one search per shard). A document without "id" is indexed under the
id the recipe's --id-from-position gives it (input name, partition, line), and the job run a
second time leaves the same documents, not copies.

Needs pyspark (scripts/jvm-deps.sh) and java 17 + mvn (opensearch.py).
"""
import importlib.util
import json
import random
import shutil
from collections import Counter
from pathlib import Path

from bulk_support import random_key
from harness import HAMMER
from opensearch import opensearch_cluster  # noqa: F401  (session fixture)
from spark_session import require_spark, spark_context

RECIPE = Path(__file__).resolve().parents[2] / "integrations" / "spark" / "bulk_index.py"
SHARDS, PER_SHARD, DOCUMENTS = 6, 2, 30_000


def load_recipe():
    spec = importlib.util.spec_from_file_location("bulk_index", RECIPE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def documents(n, seed=11):
    rng = random.Random(seed)
    seen, lines = set(), []
    while len(lines) < n:
        doc_id = random_key(rng)
        if doc_id in seen:
            continue
        seen.add(doc_id)
        lines.append(json.dumps({"id": doc_id, "n": len(lines), "text": random_key(rng, 40)},
                                ensure_ascii=rng.random() < 0.5))
    return lines


def test_spark_route_partition_bulk_into_opensearch(opensearch_cluster, tmp_path):
    require_spark()
    c = opensearch_cluster
    c.request("DELETE", "/spark-bulk")
    status, body = c.request("PUT", "/spark-bulk", {"settings": {
        "number_of_shards": SHARDS, "number_of_replicas": 0, "refresh_interval": "-1"},
        "mappings": {"properties": {"n": {"type": "long"}}}})
    assert status == 200, body
    hammer = str(tmp_path / "hammer")
    shutil.copy2(HAMMER, hammer)  # safe from a concurrent rebuild
    cluster = ",".join(n.url for n in c.nodes.values() if n.running)

    lines = documents(DOCUMENTS)
    valid = {json.loads(line)["id"] for line in lines}
    bad = ['{"n": 1, "no": "id field"}', "not json", '{"id": "conflict-1", "n": "text"}']
    lines[100:100] = bad
    dead_dir = tmp_path / "dead"
    dead_dir.mkdir()

    recipe = load_recipe()
    with spark_context("hammer-spark-bulk-it", cores=2) as sc:
        rdd = sc.parallelize(lines, 4)
        summaries, totals = recipe.index_documents(sc, rdd, hammer, cluster, "spark-bulk",
                                                   PER_SHARD, dead_letter_dir=str(dead_dir),
                                                   input_name="docs")
        # The job again, as a re-run would: the same ids, so no copies.
        rerun_dead = tmp_path / "rerun-dead"
        rerun_dead.mkdir()
        _, rerun_totals = recipe.index_documents(sc, rdd, hammer, cluster, "spark-bulk",
                                                 PER_SHARD, dead_letter_dir=str(rerun_dead),
                                                 input_name="docs")
    print(totals)
    assert rerun_totals == totals, rerun_totals

    # One `hammer bulk` per partition (K per shard), each holding a single shard's documents.
    assert len(summaries) == SHARDS * PER_SHARD
    assert totals["requests_off_primary"] == 0
    assert all(s["balanced"] for s in summaries)
    shards_fed = [Counter(node["name"] for node in s["nodes"] if node["documents"])
                  for s in summaries]
    assert all(len(fed) <= 1 for fed in shards_fed), shards_fed

    letters = {}
    for path in dead_dir.iterdir():
        kind = "route" if path.name.startswith("route-") else "bulk"
        letters.setdefault(kind, []).extend(json.loads(l) for l in path.read_text().splitlines())
    route_dead, bulk_dead = letters.get("route", []), letters.get("bulk", [])
    assert [l["reason"].split(":")[0] for l in route_dead] == ["invalid JSON"]
    assert [l["error_type"] for l in bulk_dead] == ["mapper_parsing_exception"]
    assert totals["dead_lettered"] == len(bulk_dead)
    # Every input line accounted for.
    assert totals["indexed"] + len(route_dead) + len(bulk_dead) == len(lines)
    assert totals["indexed"] == DOCUMENTS + 1  # the document without "id" too

    c.request("POST", "/spark-bulk/_refresh")
    status, body = c.request("GET", "/spark-bulk/_count")
    assert status == 200 and body["count"] == DOCUMENTS + 1

    # The documents live on the shard `hammer route` computed (offline, same numbers).
    import subprocess
    routed = subprocess.run([hammer, "route", "--shards", str(SHARDS), "--distribution",
                             "opensearch", "--id-field", "id", "-q"],
                            input="\n".join(lines[:100] + lines[103:]) + "\n",
                            capture_output=True, text=True, check=True).stdout.splitlines()
    expected = {json.loads(l.split("\t", 1)[1])["id"]: int(l.split("\t", 1)[0]) for l in routed}
    positional = []
    for shard in range(SHARDS):
        status, body = c.request("POST", f"/spark-bulk/_search?preference=_shards:{shard}",
                                 {"size": 10000, "_source": False})
        assert status == 200
        for hit in body["hits"]["hits"]:
            if hit["_id"] in expected:
                assert expected[hit["_id"]] == shard
            else:
                positional.append(hit["_id"])
    # "docs#PARTITION:LINE": the bad lines sit at 100..102, in the first of 4 partitions.
    assert positional == ["docs#0:101"], positional
    assert valid == set(expected)
    c.request("DELETE", "/spark-bulk")
