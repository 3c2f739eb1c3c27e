#!/usr/bin/env bash
# Shard-aware bulk indexing as a Hadoop Streaming job (the bulk seed's pipeline on Hadoop):
#
#   mapper    hammer route             KEY<TAB>action<TAB>document, KEY = the document's primary
#                                      shard (computed from the index's own routing metadata)
#   shuffle                            groups each shard's documents in one reducer
#   reducer   hammer bulk --from-route sends each shard's batches straight to the node holding
#                                      that primary, so the cluster does not forward them
#
# Why these flags:
#   mapreduce.job.reduces=SHARDS       one reducer per shard is the natural shape; Hadoop's hash
#                                      partitioner may put two shards in one reducer, which stays
#                                      shard-aware (hammer bulk batches per shard) but less even
#   mapreduce.reduce.speculative=false a speculative reducer would index its documents twice;
#                                      with ids that only overwrites, but it doubles the load
#   --id-from-position                 a document without an "id" gets the _id FILE:START:LINE
#                                      (its split's file and first byte, its line in the split),
#                                      the same in every attempt: a retried map or reduce task,
#                                      or the whole job run again on the same input path with
#                                      the same split size, overwrites the documents an earlier
#                                      attempt indexed instead of adding copies (a copy of the
#                                      input elsewhere is another input, with other ids). The
#                                      mapper writes each document's action (with its _id), so
#                                      the reducer reads action+source payloads (no --id-field)
#   --dead-letter ...-{pid}.jsonl      one file per task (the pid makes names unique); input
#                                      lines = indexed + route dead letters + bulk dead letters
#   --hadoop                           hammer bulk writes counters (group hammer_bulk:
#                                      documents_read, indexed, dead_lettered, requests_off_primary)
#
# Input: one JSON document per line; its "id" field, when it has one, is its _id. Usage:
#   run-bulk-index.sh DOCS_ON_HDFS OUTPUT_DIR CLUSTER_URLS INDEX
#   e.g.  run-bulk-index.sh /user/me/docs.jsonl /user/me/bulk-out http://es-1:9200,http://es-2:9200 logs
# tests/integration/test_hadoop_bulk.py runs this job shape on Hadoop's local runner against a
# real 3-node OpenSearch cluster.
set -euo pipefail
docs=$1 out=$2 cluster=$3 index=$4
shards=$(hammer route --cluster "$cluster" --index "$index" --describe |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["number_of_shards"])')
hadoop jar "$HADOOP_HOME"/share/hadoop/tools/lib/hadoop-streaming-*.jar \
  -files "$(command -v hammer)" \
  -D mapreduce.job.name="hammer bulk index $index" \
  -D mapreduce.job.reduces="$shards" \
  -D mapreduce.map.speculative=false \
  -D mapreduce.reduce.speculative=false \
  -D mapreduce.task.timeout=600000 \
  -input "$docs" \
  -output "$out" \
  -mapper "hammer route --cluster $cluster --index $index --id-field id --id-from-position -q --dead-letter route-dead-{pid}.jsonl" \
  -reducer "hammer bulk --cluster $cluster --index $index --from-route -q --hadoop --summary-json - --dead-letter bulk-dead-{pid}.jsonl"
