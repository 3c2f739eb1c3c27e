#!/usr/bin/env bash
# Installs the Python packages of the integration tests into the interpreter
# scripts/python-env.sh names: pytest, and tests/integration/requirements.txt (pyspark, py4j,
# kazoo, jsonschema, grpcio, websockets). On a Python that belongs to the system package manager (Debian
# 12's python3 is marked EXTERNALLY-MANAGED, PEP 668), pip may not install into it, so a
# virtual environment is made first, outside the repository (~/.cache/hammer-venv or
# $HAMMER_VENV; python3-venv, from scripts/deps.sh test). Nothing happens when everything is
# installed at the pinned versions.
#
# Usage: scripts/python-deps.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
requirements="$root/tests/integration/requirements.txt"
python="$("$root/scripts/python-env.sh")"

if [ ! -x "$python" ] && ! command -v "$python" >/dev/null 2>&1; then
  venv="$(dirname "$(dirname "$python")")"
  echo "python-deps: creating the virtual environment $venv" >&2
  python3 -m venv "$venv"
fi

# Every requirement at its pinned version, and pytest at any version?
if "$python" - "$requirements" 2>/dev/null <<'PY'; then
import sys
from importlib import metadata
import pytest  # noqa: F401
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if line:
        name, version = line.split("==")
        if metadata.version(name) != version:
            sys.exit(1)
PY
  exit 0
fi
echo "python-deps: installing pytest and $requirements into $python" >&2
"$python" -m pip install -q --disable-pip-version-check pytest -r "$requirements"
