#!/usr/bin/env bash
# Installs the Node packages of the integration tests (scripts/npm/package.json, versions locked
# in scripts/npm/package-lock.json) into a cache outside the repository: ~/.cache/hammer-npm, or
# $HAMMER_NPM_DIR. Today that is only playwright-core, which drives Debian's Chromium
# (/usr/bin/chromium, from scripts/deps.sh test) to record a HAR file in
# tests/integration/test_load_real_services.py. It never downloads a browser.
# Idempotent: nothing happens while the installed lock file equals the one in scripts/npm/.
# First run: ~2 s and 14 MB (one package from the npm registry); later runs: instant.
# Needs Node.js >= 18 and npm: Debian 12's own nodejs (18.x) and npm packages, which
# scripts/deps.sh test installs. playwright-core is pinned to 1.61.1, the last release whose
# package.json accepts Node 18 ("engines": {"node": ">=18"}; 1.62.0 and later say ">=20", see
# `npm view playwright-core@1.62.0 engines`).
#
# Usage: scripts/npm-deps.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/scripts/npm"
dest="${HAMMER_NPM_DIR:-$HOME/.cache/hammer-npm}"

if ! command -v npm >/dev/null 2>&1; then
  echo "npm-deps: npm not found (Node.js >= 18 with npm is needed)" >&2
  exit 1
fi
# The locked playwright-core's package.json says "engines": {"node": ">=18"}.
node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ "$node_major" -lt 18 ]; then
  echo "npm-deps: Node.js $(node --version 2>/dev/null || echo '(none)') is too old: playwright-core" \
    "needs >= 18 (Debian 12's nodejs package is 18)" >&2
  exit 1
fi

if [ -d "$dest/node_modules/playwright-core" ] &&
  cmp -s "$src/package-lock.json" "$dest/package-lock.json"; then
  exit 0
fi
mkdir -p "$dest"
cp "$src/package.json" "$src/package-lock.json" "$dest/"
echo "npm-deps: installing the packages of scripts/npm/package-lock.json into $dest" >&2
# playwright-core has no install script that fetches a browser; the variable keeps it that way.
(cd "$dest" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error \
  >/dev/null)
