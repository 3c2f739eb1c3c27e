#!/usr/bin/env bash
# Prints the Python interpreter the integration tests run with; creates and installs nothing
# (scripts/python-deps.sh does). The Makefile runs pytest with it.
#
#   $HAMMER_PYTHON     when set
#   python3            when pip may install into it: a virtualenv, pyenv, or any Python that is
#                      not marked EXTERNALLY-MANAGED (PEP 668)
#   $HAMMER_VENV/bin/python (default ~/.cache/hammer-venv) otherwise, e.g. Debian 12's
#                      /usr/bin/python3, whose packages belong to apt
set -euo pipefail
if [ -n "${HAMMER_PYTHON:-}" ]; then
  echo "$HAMMER_PYTHON"
  exit 0
fi
# Exit status 0: pip may install into this interpreter.
if python3 - 2>/dev/null <<'PY'; then
import os, sys, sysconfig
in_venv = sys.prefix != sys.base_prefix
marked = os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))
sys.exit(0 if in_venv or not marked else 1)
PY
  echo python3
else
  echo "${HAMMER_VENV:-$HOME/.cache/hammer-venv}/bin/python"
fi
