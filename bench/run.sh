#!/usr/bin/env bash
# Entry point of `make bench`: runs every benchmark in bench/ and prints their summaries together.
#
# A benchmark is any executable bench/*.sh or bench/*.py other than this file. It gets
#   HAMMER             the hammer binary to measure
#   BENCH_SUMMARY_DIR  where to write its summary as <name>.md (markdown, printed at the end)
#   BENCH_ROUNDS, BENCH_DURATION   optional overrides of rounds / seconds per run
# and keeps its raw output under build/bench/ (git-ignored). Everything targets 127.0.0.1 only.
#
# Usage: bench/run.sh [NAME...]      (NAME filters by script name, e.g. bench/run.sh load_engine)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/build/bench
mkdir -p "$out"

start=$(date +%s)
if [ -z "${HAMMER:-}" ]; then
  # `make bench` has just built it; when run by hand, bring it up to date. Others edit the tree
  # concurrently, so a failed build falls back to the binary already there.
  if ! { cmake -S . -B build/release -G Ninja -Wno-dev >/dev/null &&
    ninja -C build/release hammer >"$out/hammer-build.log" 2>&1; }; then
    echo "bench: hammer build failed (see $out/hammer-build.log); using the existing binary" >&2
  fi
  HAMMER=$root/build/release/hammer
fi
[ -x "$HAMMER" ] || { echo "bench: no hammer binary at $HAMMER" >&2; exit 1; }
export HAMMER
export BENCH_SUMMARY_DIR=$out/summaries
rm -rf "$BENCH_SUMMARY_DIR"
mkdir -p "$BENCH_SUMMARY_DIR"

status=0
for script in bench/*.sh bench/*.py; do
  [ -e "$script" ] || continue
  [ "$script" = bench/run.sh ] && continue
  [ -x "$script" ] || continue
  name=$(basename "${script%.*}")
  if [ $# -gt 0 ]; then
    case " $* " in *" $name "*) ;; *) continue ;; esac
  fi
  echo "== $script" >&2
  # Each benchmark bounds its own runs; this is the backstop (20 minutes, or the script's own
  # "# bench-timeout: SECONDS" line).
  limit=$(sed -n 's/^# bench-timeout: *\([0-9][0-9]*\).*/\1/p' "$script" | head -n 1)
  if ! timeout -k 10 "${limit:-1200}" "$script" >"$out/$name.log"; then
    echo "bench: $script failed (log: $out/$name.log)" >&2
    status=1
  fi
done

echo
echo "# hammer benchmarks — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, hammer $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo '+dirty')"
echo
for summary in "$BENCH_SUMMARY_DIR"/*.md; do
  [ -e "$summary" ] || continue
  cat "$summary"
  echo
done
echo "bench: done in $(($(date +%s) - start)) s (raw results under $out)" >&2
exit $status
