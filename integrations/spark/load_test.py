"""A load test as a Spark job: each partition of the URL list is piped through `hammer load`, and
the records are aggregated per URL by `hammer stats` (partials merged exactly, never averaged).

spark-submit --master yarn --num-executors 20 --files /usr/local/bin/hammer \
    integrations/spark/load_test.py hdfs:///user/me/urls.txt 20 20000 10m out/
"""
import os
import sys

from pyspark.sql import SparkSession


def main(urls, partitions, rate_total, duration, out):
    spark = SparkSession.builder.appName("hammer load test").getOrCreate()
    sc = spark.sparkContext
    hammer = os.environ.get("HAMMER", "./hammer")
    lines = sc.textFile(urls).repartition(int(partitions))

    def run(index, rows):
        # pipe() sets no task identity: pass the worker index and count ourselves.
        import subprocess
        env = dict(os.environ, HAMMER_WORKER_INDEX=str(index), HAMMER_WORKERS=str(partitions))
        proc = subprocess.run(
            [hammer, "load", "-", "--loop", "-d", duration, "--rate-total", str(rate_total),
             "-c", "200", "--emit", "partials", "-q"],
            input="\n".join(rows) + "\n", capture_output=True, text=True, env=env, check=True)
        return proc.stdout.splitlines()

    partials = lines.mapPartitionsWithIndex(run)
    # One reducer pass over every partial: exact merged histograms per URL.
    merged = partials.coalesce(1).pipe(f"{hammer} stats --reducer", env=dict(os.environ))
    merged.saveAsTextFile(out)


if __name__ == "__main__":
    main(*sys.argv[1:])
