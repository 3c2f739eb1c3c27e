"""The bulk seed's pipeline, with exact routing: documents -> `hammer route` (shard key per
document, computed the way the cluster computes it) -> partitionBy(shard key, K partitions per
shard) -> each partition piped to `hammer bulk --from-route`, which sends it straight to the node
holding that shard's primary.

spark-submit --master yarn --files /usr/local/bin/hammer integrations/spark/bulk_index.py \
    hdfs:///user/me/docs.jsonl http://es-1:9200,http://es-2:9200 my-index 2

Input: one JSON document per line with an "id" field (its _id). Output on the driver: one
`hammer bulk` summary per partition and their sum; each task's rejected documents are in
route-dead-letter-<pid>.jsonl (lines that are not a document with an id) and
dead-letter-<pid>.jsonl (documents the cluster rejected) in the working directory: input lines
= indexed + route dead letters + bulk dead letters.
tests/integration/test_spark_bulk.py runs index_documents() against a real OpenSearch cluster.
"""
import json
import os
import subprocess
import sys

# Counters of a `hammer bulk --summary-json` that add up across partitions.
SUMMED = ("documents_read", "indexed", "dead_lettered", "requests", "requests_off_primary")


def describe(hammer, cluster, index, per_shard):
    """The index's routing as `hammer route --describe` reads it from the cluster."""
    out = subprocess.run([hammer, "route", "--cluster", cluster, "--index", index, "-k",
                          str(per_shard), "--describe"], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


def index_documents(sc, documents, hammer, cluster, index, per_shard=1, id_field="id",
                    dead_letter_dir="."):
    """Indexes an RDD of JSON document lines; returns (per-partition summaries, totals)."""
    partitions = describe(hammer, cluster, index, per_shard)["partitions"]
    env = dict(os.environ)
    # KEY<TAB>document, KEY = shard * per_shard + slot (-1: shard unknown, any partition).
    routed = documents.pipe(
        f"{hammer} route --cluster {cluster} --index {index} --id-field {id_field} "
        f"-k {per_shard} -q --dead-letter {dead_letter_dir}/route-dead-letter-{{pid}}.jsonl",
        env=env, checkCode=True)
    keyed = routed.map(lambda line: (int(line.split("\t", 1)[0]), line))
    by_shard = keyed.partitionBy(partitions, lambda key: key % partitions).values()
    summaries = by_shard.pipe(
        f"{hammer} bulk --cluster {cluster} --index {index} --from-route --id-field {id_field} "
        f"-q --summary-json - --dead-letter {dead_letter_dir}/dead-letter-{{pid}}.jsonl",
        env=env, checkCode=True).map(json.loads).collect()
    totals = {key: sum(s[key] for s in summaries) for key in SUMMED}
    return summaries, totals


def main(docs, cluster, index, per_shard="1"):
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("hammer bulk index").getOrCreate()
    hammer = os.environ.get("HAMMER", "./hammer")
    _, totals = index_documents(spark.sparkContext, spark.sparkContext.textFile(docs), hammer,
                                cluster, index, int(per_shard))
    print(json.dumps(totals))
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
