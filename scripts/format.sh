#!/usr/bin/env bash
# clang-format over every C++ file of the project; --check fails on the first difference.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files --cached --others --exclude-standard -- '*.cc' '*.h')
[ -n "$files" ] || exit 0
if [ "${1:-}" = "--check" ]; then
  clang-format --dry-run -Werror $files
  echo "clang-format: clean"
else
  clang-format -i $files
fi
