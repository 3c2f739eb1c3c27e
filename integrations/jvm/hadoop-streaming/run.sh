#!/usr/bin/env bash
# Runs the streaming harness (hammer.hadoopit.StreamingHarness) on JDK 17 with the JPMS flags
# Hadoop 3.4 needs. Build it first: scripts/jvm-deps.sh (or mvn -q package here).
# Usage: run.sh --mode local|mini --work DIR   (then JSON job requests on stdin; see the class)
# JAVA_HOME may point at another JDK 17; by default the Debian one is used, never a newer JDK.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export JAVA_HOME="${HAMMER_JAVA17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
[ -x "$JAVA_HOME/bin/java" ] || { echo "run.sh: no JDK 17 at $JAVA_HOME" >&2; exit 2; }
jar="$here/target/hadoop-streaming-it.jar"
[ -f "$jar" ] || { echo "run.sh: $jar missing: run scripts/jvm-deps.sh hadoop" >&2; exit 2; }
# Every wildcard bind becomes a loopback bind (src/main/c/loopback_bind.c): Hadoop hard-codes
# 0.0.0.0 for a few servers. The harness passes it on to the YARN containers.
shim="$here/target/libloopback-bind.so"
[ -f "$shim" ] || { echo "run.sh: $shim missing: run scripts/jvm-deps.sh hadoop" >&2; exit 2; }
export LD_PRELOAD="$shim${LD_PRELOAD:+:$LD_PRELOAD}"

opens=(java.lang java.lang.reflect java.lang.invoke java.io java.net java.nio java.math
  java.text java.util java.util.concurrent java.util.concurrent.atomic java.util.zip
  jdk.internal.ref sun.nio.ch sun.nio.cs sun.security.action sun.security.util
  sun.security.x509 sun.util.calendar)
flags=(-XX:+IgnoreUnrecognizedVMOptions -Djava.net.preferIPv4Stack=true -Xmx1g
  -XX:+UseSerialGC -XX:TieredStopAtLevel=1)
for p in "${opens[@]}"; do flags+=("--add-opens=java.base/$p=ALL-UNNAMED"); done

# YARN containers of the mini cluster run $JAVA_HOME/bin/java with this JVM's class path, so
# the class path is spelled out jar by jar (a wildcard would be expanded by the launcher anyway).
cp="$jar:$here/target/lib/*"
exec "$JAVA_HOME/bin/java" "${flags[@]}" ${HAMMER_HARNESS_JAVA_OPTS:-} -cp "$cp" \
  hammer.hadoopit.StreamingHarness "$@"
