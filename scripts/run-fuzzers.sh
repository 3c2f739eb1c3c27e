#!/usr/bin/env bash
# Runs each libFuzzer target in BUILD_DIR for SECONDS, starting from tests/fuzz/corpus/<name>,
# JOBS of them at a time (default 2: a target is one process on one core, and CI has two).
# A target that fails prints the end of its log; the script then exits 1, after the others.
# What libFuzzer saves (crash-*, timeout-*, slow-unit-* inputs) goes to BUILD_DIR/fuzz-artifacts,
# not into the directory the script runs in (a checkout's root, otherwise).
set -euo pipefail
build=$1
seconds=${2:-10}
jobs=${3:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
logs=$(mktemp -d)
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
trap 'rm -rf "$logs"' EXIT

# One target, its corpus copied into a directory of its own; the exit status is the target's.
fuzz_one() {
  local bin=$1 name work seed
  name=$(basename "$bin")
  work=$(mktemp -d)
  seed="$root/tests/fuzz/corpus/${name%_fuzz}"
  [ -d "$seed" ] && cp -r "$seed"/. "$work"/
  local status=0
  "$bin" -max_total_time="$seconds" -max_len=65536 -print_final_stats=0 \
    -artifact_prefix="$artifacts/$name-" "$work" \
    >"$logs/$name.log" 2>&1 || status=$?
  rm -rf "$work"
  if [ "$status" -ne 0 ]; then
    echo "fuzz: $name failed (exit $status):"
    tail -n 40 "$logs/$name.log"
    echo "fuzz: $name's inputs, if it saved any: $artifacts/$name-*"
  fi
  return "$status"
}

status=0
running=0
for bin in "$build"/*_fuzz; do
  [ -x "$bin" ] || continue
  if [ "$running" -ge "$jobs" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  echo "fuzz: $(basename "$bin") for ${seconds}s"
  fuzz_one "$bin" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
