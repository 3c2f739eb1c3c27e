"""The bulk seed's pipeline, with exact routing: documents -> `hammer route` (shard key per
document, computed the way the cluster computes it) -> partitionBy(shard key, K partitions per
shard) -> each partition piped to `hammer bulk --from-route`, which sends it straight to the node
holding that shard's primary.

spark-submit --master yarn --files /usr/local/bin/hammer integrations/spark/bulk_index.py \
    hdfs:///user/me/docs.ndjson http://127.0.0.1:9200 my-index 6 2
"""
import os
import sys

from pyspark.sql import SparkSession


def main(docs, cluster, index, shards, per_shard):
    shards, per_shard = int(shards), int(per_shard)
    spark = SparkSession.builder.appName("hammer bulk index").getOrCreate()
    sc = spark.sparkContext
    hammer = os.environ.get("HAMMER", "./hammer")
    env = dict(os.environ)
    routed = sc.textFile(docs).pipe(
        f"{hammer} route --cluster {cluster} --index {index} --id-field id "
        f"--partitions-per-shard {per_shard}", env=env)
    keyed = routed.map(lambda line: (line.split("\t", 1)[0], line))
    partitioned = keyed.partitionBy(shards * per_shard, lambda key: int(key) if key.isdigit() else 0)
    results = partitioned.values().pipe(
        f"{hammer} bulk --cluster {cluster} --index {index} --from-route "
        f"--dead-letter dead-letter.ndjson", env=env)
    print("\n".join(results.collect()))


if __name__ == "__main__":
    main(*sys.argv[1:])
