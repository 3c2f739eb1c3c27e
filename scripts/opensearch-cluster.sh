#!/usr/bin/env bash
# Starts a real N-node OpenSearch 2.19 cluster (default 3) on 127.0.0.1 for manual tests and
# benchmarks: integrations/jvm/opensearch-cluster, built first when missing or stale.
#
# Usage: scripts/opensearch-cluster.sh [--control FIFO] [--data DIR] [harness options...]
#   harness options: --nodes N  --http-ports 9201,9202,9203  --transport-ports 9301,9302,9303
#                    --processors P  --cluster-name NAME  --setting key=value (repeatable)
#   ports default to free loopback ports; heap: OPENSEARCH_CLUSTER_HEAP (default 2g).
#
# Prints "node-1 http 127.0.0.1:PORT transport 127.0.0.1:PORT id NODEID" per node, then
# "cluster ready". Commands, one per line: "stop node-2" (prints "node-2 stopped"),
# "start node-2" (prints "node-2 started"), "quit".
#   - In a terminal: type them. Ctrl-C, SIGTERM or stdin EOF stop the cluster.
#   - In the background (benchmarks): --control FIFO reads them from that named pipe instead of
#     stdin (created if missing), e.g. `echo "stop node-2" > FIFO`; stop the cluster with
#     "quit" or SIGTERM to this script.
# Without --data the data and the log (<data>/logs/<cluster-name>.log) go to a temp dir that is
# removed at exit (KEEP_DATA=1 keeps it).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TOOL="$ROOT/integrations/jvm/opensearch-cluster"
JAR="$TOOL/target/opensearch-cluster.jar"

# OpenSearch 2.19 needs Java 17; never pick up a newer JDK that may also be installed.
if [ -n "${OPENSEARCH_JAVA_HOME:-${HAMMER_JAVA17_HOME:-}}" ]; then
  export JAVA_HOME="${OPENSEARCH_JAVA_HOME:-$HAMMER_JAVA17_HOME}"
elif [ -x /usr/lib/jvm/java-17-openjdk-amd64/bin/java ]; then
  export JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64
fi
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"

control="" data="" args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --control) control="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done

stale=1
if [ -f "$JAR" ] && [ -d "$TOOL/target/lib" ] &&
   [ -z "$(find "$TOOL/pom.xml" "$TOOL/src" -newer "$JAR" -print -quit)" ]; then
  stale=0
fi
if [ "$stale" = 1 ]; then
  echo "building $TOOL ..." >&2
  (cd "$TOOL" && { mvn -q -B -o package >/dev/null 2>&1 || mvn -q -B package; })
fi

tmp=""
if [ -z "$data" ]; then
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/hammer-opensearch-XXXXXX")"
  data="$tmp"
fi

pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  if [ -n "$tmp" ] && [ -z "${KEEP_DATA:-}" ]; then
    rm -rf "$tmp"
  elif [ -n "$tmp" ]; then
    echo "data kept in $tmp" >&2
  fi
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

if [ -n "$control" ]; then
  [ -p "$control" ] || mkfifo "$control"
  # Opened read-write, so that the pipe never reports EOF between two writers.
  exec 3<>"$control"
else
  exec 3<&0
fi

# In the background so that the traps run at once; stdin is given explicitly.
"$JAVA" -Xms512m "-Xmx${OPENSEARCH_CLUSTER_HEAP:-2g}" -XX:+ExitOnOutOfMemoryError \
  -Dfile.encoding=UTF-8 -Djava.locale.providers=SPI,COMPAT -Djava.net.preferIPv4Stack=true \
  -jar "$JAR" --data "$data" "${args[@]}" <&3 &
pid=$!
exec 3<&-
set +e
wait "$pid"
rc=$?
pid=""
exit "$rc"
