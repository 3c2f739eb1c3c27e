#!/usr/bin/env bash
# Runs each libFuzzer target in BUILD_DIR for SECONDS, starting from tests/fuzz/corpus/<name>.
set -euo pipefail
build=$1
seconds=${2:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
status=0
for bin in "$build"/*_fuzz; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  work=$(mktemp -d)
  seed="$root/tests/fuzz/corpus/${name%_fuzz}"
  [ -d "$seed" ] && cp -r "$seed"/. "$work"/
  echo "fuzz: $name for ${seconds}s"
  if ! "$bin" -max_total_time="$seconds" -max_len=65536 -print_final_stats=0 "$work" \
      >"$work.log" 2>&1; then
    tail -n 40 "$work.log"
    status=1
  fi
  rm -rf "$work" "$work.log"
done
exit $status
