"""The bulk seed's pipeline, with exact routing: documents -> `hammer route` (shard key per
document, computed the way the cluster computes it) -> partitionBy(shard key, K partitions per
shard) -> each partition piped to `hammer bulk --from-route`, which sends it straight to the node
holding that shard's primary.

spark-submit --master yarn --files /usr/local/bin/hammer integrations/spark/bulk_index.py \
    hdfs:///user/me/docs.jsonl http://es-1:9200,http://es-2:9200 my-index 2

Input: one JSON document per line; its "id" field, when it has one, is its _id. A document
without one gets the _id NAME#PARTITION:LINE from `hammer route --id-from-position` (NAME: the
input's name, PARTITION and LINE: where the document is in `documents`), the same in every
attempt of a task, so a retried task or the job run again overwrites what an earlier attempt
indexed instead of adding copies. This needs `documents` to be read the same way each time (a
textFile, or any RDD whose partitions are deterministic). Output on the driver: one
`hammer bulk` summary per partition and their sum; each task's rejected documents are in
route-dead-letter-<pid>.jsonl (lines that are not a JSON document) and
dead-letter-<pid>.jsonl (documents the cluster rejected) in the working directory: input lines
= indexed + route dead letters + bulk dead letters.
tests/integration/test_spark_bulk.py runs index_documents() against a real OpenSearch cluster.
"""
import json
import os
import shlex
import subprocess
import sys
import threading

# Counters of a `hammer bulk --summary-json` that add up across partitions.
SUMMED = ("documents_read", "indexed", "dead_lettered", "requests", "requests_off_primary")


def describe(hammer, cluster, index, per_shard):
    """The index's routing as `hammer route --describe` reads it from the cluster."""
    out = subprocess.run([hammer, "route", "--cluster", cluster, "--index", index, "-k",
                          str(per_shard), "--describe"], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


def pipe_naming_partitions(rdd, command, env, input_name):
    """rdd.pipe(command), with HAMMER_INPUT_NAME=<input_name>#<partition index> in each
    partition's environment (pipe() gives all partitions one environment), which is what
    `--id-from-position` names a document's input by."""
    def run(partition, lines):
        proc = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE,
                                env=dict(env, HAMMER_INPUT_NAME=f"{input_name}#{partition}"))

        def feed():
            for line in lines:
                proc.stdin.write(line.encode("utf-8") + b"\n")
            proc.stdin.close()

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        for out in proc.stdout:
            yield out.decode("utf-8").rstrip("\n")
        feeder.join()
        if proc.wait() != 0:
            raise RuntimeError(f"{command} exited with status {proc.returncode}")
    return rdd.mapPartitionsWithIndex(run)


def index_documents(sc, documents, hammer, cluster, index, per_shard=1, id_field="id",
                    dead_letter_dir=".", input_name="documents"):
    """Indexes an RDD of JSON document lines; returns (per-partition summaries, totals)."""
    partitions = describe(hammer, cluster, index, per_shard)["partitions"]
    env = dict(os.environ)
    # KEY<TAB>action<TAB>document, KEY = shard * per_shard + slot (-1: shard unknown, any
    # partition); the action holds the _id, from the id field or the document's position.
    routed = pipe_naming_partitions(
        documents,
        f"{hammer} route --cluster {cluster} --index {index} --id-field {id_field} "
        f"--id-from-position -k {per_shard} -q "
        f"--dead-letter {dead_letter_dir}/route-dead-letter-{{pid}}.jsonl",
        env, input_name)
    keyed = routed.map(lambda line: (int(line.split("\t", 1)[0]), line))
    by_shard = keyed.partitionBy(partitions, lambda key: key % partitions).values()
    summaries = by_shard.pipe(
        f"{hammer} bulk --cluster {cluster} --index {index} --from-route "
        f"-q --summary-json - --dead-letter {dead_letter_dir}/dead-letter-{{pid}}.jsonl",
        env=env, checkCode=True).map(json.loads).collect()
    totals = {key: sum(s[key] for s in summaries) for key in SUMMED}
    return summaries, totals


def main(docs, cluster, index, per_shard="1"):
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("hammer bulk index").getOrCreate()
    hammer = os.environ.get("HAMMER", "./hammer")
    _, totals = index_documents(spark.sparkContext, spark.sparkContext.textFile(docs), hammer,
                                cluster, index, int(per_shard), input_name=docs)
    print(json.dumps(totals))
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
