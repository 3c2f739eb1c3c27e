"""A load test as a Spark job: each partition of the URL list is piped through `hammer load`, and
the records are aggregated per URL by `hammer stats` (partials merged exactly, never averaged).
It ends with the run's verdict: the driver's `hammer stats` reads the saved per-URL output back,
prints the table and judges each RULE (hammer load --threshold's syntax) on the merge of every
partition; the job's exit status is that verdict (0 passed, 3 a rule failed, 2 a bad rule).

spark-submit --master yarn --num-executors 20 --files /usr/local/bin/hammer \
    integrations/spark/load_test.py hdfs:///user/me/urls.txt 20 20000 10m out/ \
    'p99<250ms' 'errors<1%'
"""
import os
import subprocess
import sys

from pyspark.sql import SparkSession


def main(urls, partitions, rate_total, duration, out, *rules):
    hammer = os.environ.get("HAMMER", "./hammer")
    judge = [hammer, "stats", "--table"] + [arg for rule in rules for arg in ("--threshold", rule)]
    # A mistyped rule is refused now, not after the run: hammer stats checks its rules before it
    # reads anything (on no input, rules that parse fail with "no requests", exit 3).
    checked = subprocess.run(judge, input="", capture_output=True, text=True)
    if checked.returncode == 2:
        sys.stderr.write(checked.stderr)
        return 2
    spark = SparkSession.builder.appName("hammer load test").getOrCreate()
    sc = spark.sparkContext
    lines = sc.textFile(urls).repartition(int(partitions))

    def run(index, rows):
        # pipe() sets no task identity: pass the worker index and count ourselves.
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
    # The verdict, from what was saved: computing `merged` again would send the load again.
    saved = "".join(line + "\n" for line in sc.textFile(out).collect())
    spark.stop()
    return subprocess.run(judge, input=saved, text=True).returncode


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
