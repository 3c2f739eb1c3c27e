#!/usr/bin/env bash
# Prepares the real-engine integration tests (tests/integration/test_hadoop_streaming.py,
# test_spark_pipe.py): builds the Hadoop Streaming harness with Maven and installs pyspark.
# Idempotent and quick when everything is there; Maven runs offline first (a warm ~/.m2 needs
# no network) and online only when something is missing.
# Needs JDK 17 and Maven (scripts/deps.sh test installs openjdk-17-jdk-headless and maven).
#
# Usage: scripts/jvm-deps.sh [all|hadoop|spark]     (default: all)
# First run (measured on the 2-core machine): Maven with an empty ~/.m2 downloads ~140 MB
# (2,400 files) in 30-80 s and copies 104 MB of jars to target/lib; pyspark 3.5.9 is a 318 MB
# sdist from PyPI, ~70 s to download and build, 345 MB installed. Later runs: under a second.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
harness="$root/integrations/jvm/hadoop-streaming"
requirements="$root/tests/integration/requirements.txt"
# Hadoop 3.4 and Spark 3.5 are run on JDK 17, never on a newer JDK that may also be installed.
export JAVA_HOME="${HAMMER_JAVA17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
python="${PYTHON:-python3}"

need() {
  command -v "$1" >/dev/null 2>&1 || { echo "jvm-deps: $1 not found ($2)" >&2; exit 1; }
}

harness_fresh() {
  local jar="$harness/target/hadoop-streaming-it.jar"
  [ -f "$jar" ] && [ -d "$harness/target/lib" ] || return 1
  [ -z "$(find "$harness/pom.xml" "$harness/src" -newer "$jar" -type f -print -quit)" ]
}

build_hadoop() {
  [ -x "$JAVA_HOME/bin/java" ] || { echo "jvm-deps: no JDK 17 at $JAVA_HOME" >&2; exit 1; }
  need mvn "apt-get install maven"
  if harness_fresh; then
    return 0
  fi
  echo "jvm-deps: building $harness" >&2
  # -o: everything from ~/.m2; online only when something is missing there.
  if ! (cd "$harness" && mvn -B -q -o package >/dev/null 2>&1); then
    (cd "$harness" && mvn -B -q package)
  fi
  harness_fresh || { echo "jvm-deps: harness jar missing after the build" >&2; exit 1; }
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
  all) build_hadoop; install_spark ;;
  hadoop) build_hadoop ;;
  spark) install_spark ;;
  *) echo "usage: $0 [all|hadoop|spark]" >&2; exit 2 ;;
esac
