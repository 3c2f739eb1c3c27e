#!/usr/bin/env bash
# A load test as a Hadoop Streaming job: the seed's `hadoop jar` command, corrected.
#
#   mapper    hammer load      one process per map task; requests its split's URLs
#   combiner  hammer stats --combine   per-map partial histograms (a small shuffle)
#   reducer   hammer stats --reducer   per-URL sum, average, max, min, errors, count,
#                                      p50/p90/p99/p99.9 and the HdrHistogram of each URL
#
# What changed from the seed's command, and why:
#   mapreduce.map.maxattempts=1        a failed or slow mapper must not be re-run: that would
#   mapreduce.map.speculative=false    send its load twice (Hadoop defaults: 4 attempts, speculation on)
#   NLineInputFormat + linespermap     a small URL file is one split = one mapper; this makes N
#   stream.map.input.ignoreKey=true    hammer also accepts the OFFSET<TAB>URL lines either way
#   -combiner                          percentiles from merged histograms, never averaged
#   -files                             ships the hammer binary to every task
#
# Then the run's verdict: `hammer stats` reads the reducers' output back (exact histograms),
# prints the per-URL table, judges each RULE (hammer load --threshold's syntax) on the merge of
# every mapper and writes report.html. The script's exit status is that verdict: 0 every rule
# passed, 3 one failed (its line says by how much), 1 the job or a read failed, 2 a bad RULE.
#
# Usage: run-load-test.sh URLS_ON_HDFS OUTPUT_DIR MAPPERS RATE_TOTAL DURATION [RULE...]
#   e.g.  run-load-test.sh /user/me/urls.txt /user/me/load-out 20 20000 10m 'p99<250ms' 'errors<1%'
# Later: hadoop fs -cat OUTPUT_DIR/part-* | hammer stats --csv > per-url.csv
# Live: with REMOTE_WRITE=http://prometheus:9090/api/v1/write in the environment, every mapper
# also pushes its live metrics there (labels run_id, the Hadoop job id, and worker, the map
# task's index), for integrations/grafana/hammer-dashboard.json and
# integrations/prometheus/hammer-rules.yml.
set -euo pipefail
urls=$1 out=$2 maps=$3 rate=$4 duration=$5
shift 5
rules=()
for rule in "$@"; do rules+=(--threshold "$rule"); done
# A mistyped RULE is refused now, not after the run: hammer stats checks its rules before it
# reads anything (exit 2; on no input, rules that parse fail with "no requests": exit 3).
checked=0
hammer stats "${rules[@]}" < /dev/null > /dev/null 2>&1 || checked=$?
if [ "$checked" -eq 2 ]; then hammer stats "${rules[@]}" < /dev/null; exit 2; fi
lines=$(hadoop fs -cat "$urls" | wc -l)
per_map=$(( (lines + maps - 1) / maps ))
start_at=$(( $(date +%s) + 120 ))   # every mapper starts at the same second
remote_write=${REMOTE_WRITE:+ --remote-write $REMOTE_WRITE}
hadoop jar "$HADOOP_HOME"/share/hadoop/tools/lib/hadoop-streaming-*.jar \
  -files "$(command -v hammer)" \
  -D mapreduce.job.name="hammer load test" \
  -D mapreduce.map.maxattempts=1 \
  -D mapreduce.map.speculative=false \
  -D mapreduce.job.reduces=4 \
  -D mapreduce.input.lineinputformat.linespermap="$per_map" \
  -D stream.map.input.ignoreKey=true \
  -D mapreduce.task.timeout=600000 \
  -inputformat org.apache.hadoop.mapred.lib.NLineInputFormat \
  -input "$urls" \
  -output "$out" \
  -mapper "hammer load --loop -d $duration --rate-total $rate --workers $maps --start-at $start_at -c 200$remote_write" \
  -combiner "hammer stats --combine" \
  -reducer "hammer stats --reducer"

hadoop fs -cat "$out"/part-* | hammer stats --table --html report.html "${rules[@]}"
