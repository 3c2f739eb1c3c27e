#!/usr/bin/env bash
# Prepares the real-engine integration tests: builds the Maven harnesses they run
# (integrations/jvm/hadoop-streaming for the Hadoop Streaming tests, hdr-check for the
# HdrHistogram cross-check, opensearch-cluster for the OpenSearch tests), which fetches their
# artifacts into ~/.m2, and installs pyspark. `make deps-test` runs it: the tests themselves
# never download or build anything, and fail naming this script when something is missing.
# Idempotent and quick when everything is there; Maven runs offline first (a warm ~/.m2 needs
# no network) and online only when something is missing.
# Needs JDK 17 and Maven (scripts/deps.sh test installs openjdk-17-jdk-headless and maven).
#
# Usage: scripts/jvm-deps.sh [all|hadoop|hdr|opensearch|spark]     (default: all)
# First run (measured on the 2-core machine): Maven with an empty ~/.m2 downloads ~140 MB
# (2,400 files) in 30-80 s and copies 104 MB of jars to target/lib; pyspark 3.5.9 is a 318 MB
# sdist from PyPI, ~70 s to download and build, 345 MB installed. Later runs: under a second.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
jvm="$root/integrations/jvm"
requirements="$root/tests/integration/requirements.txt"
# Hadoop 3.4, OpenSearch 2.19 and Spark 3.5 run on JDK 17, never on a newer JDK that may also
# be installed.
export JAVA_HOME="${HAMMER_JAVA17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
python="${PYTHON:-python3}"

need() {
  command -v "$1" >/dev/null 2>&1 || { echo "jvm-deps: $1 not found ($2)" >&2; exit 1; }
}

# fresh DIR JAR: the jar and its target/lib exist and are newer than pom.xml and src/.
fresh() {
  [ -f "$2" ] && [ -d "$1/target/lib" ] || return 1
  [ -z "$(find "$1/pom.xml" "$1/src" -newer "$2" -type f -print -quit)" ]
}

# build_maven NAME JAR: builds integrations/jvm/NAME unless it is fresh.
build_maven() {
  local dir="$jvm/$1" jar="$jvm/$1/target/$2"
  [ -x "$JAVA_HOME/bin/java" ] || { echo "jvm-deps: no JDK 17 at $JAVA_HOME" >&2; exit 1; }
  need mvn "apt-get install maven"
  if fresh "$dir" "$jar"; then
    return 0
  fi
  echo "jvm-deps: building $dir" >&2
  # -o: everything from ~/.m2; online only when something is missing there.
  if ! (cd "$dir" && mvn -B -q -o package >/dev/null 2>&1); then
    (cd "$dir" && mvn -B -q package)
  fi
  fresh "$dir" "$jar" || { echo "jvm-deps: $jar missing after the build" >&2; exit 1; }
}

# build_hadoop: the streaming harness and its loopback_bind preload library (run.sh).
build_hadoop() {
  build_maven hadoop-streaming hadoop-streaming-it.jar
  local src="$jvm/hadoop-streaming/src/main/c/loopback_bind.c"
  local lib="$jvm/hadoop-streaming/target/libloopback-bind.so"
  if [ ! -f "$lib" ] || [ "$src" -nt "$lib" ]; then
    need cc "apt-get install build-essential"
    cc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$lib" "$src" -ldl
  fi
}

install_spark() {
  local want
  want="$(sed -n 's/^pyspark==//p' "$requirements")"
  if "$python" -c "import sys, pyspark; sys.exit(pyspark.__version__ != '$want')" 2>/dev/null; then
    return 0
  fi
  echo "jvm-deps: installing pyspark $want" >&2
  "$python" -m pip install -q --disable-pip-version-check -r "$requirements"
}

case "${1:-all}" in
  all)
    build_hadoop
    build_maven hdr-check hdr-check.jar
    build_maven opensearch-cluster opensearch-cluster.jar
    install_spark
    ;;
  hadoop) build_hadoop ;;
  hdr) build_maven hdr-check hdr-check.jar ;;
  opensearch) build_maven opensearch-cluster opensearch-cluster.jar ;;
  spark) install_spark ;;
  *) echo "usage: $0 [all|hadoop|hdr|opensearch|spark]" >&2; exit 2 ;;
esac
