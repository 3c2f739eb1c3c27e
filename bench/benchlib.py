"""Helpers shared by the benchmarks in bench/ (standard library only)."""
import os
import shutil
import subprocess
import sys
import time


def snapshot_hammer(path: str, build_dir: str, name: str, command: str) -> str:
    """Copies the hammer binary at `path` to BUILD_DIR/NAME and returns the copy's path.

    Others may rebuild the tree while a benchmark runs, and a relink in the middle of the rounds
    would mix two builds (or fail a run), so every benchmark measures a private copy. The copy
    must answer `COMMAND --help`; a binary being relinked is retried for up to a minute."""
    os.makedirs(build_dir, exist_ok=True)
    dest = os.path.join(build_dir, name)
    for _attempt in range(10):
        if os.path.exists(path):
            shutil.copy2(path, dest + ".tmp")
            os.replace(dest + ".tmp", dest)
            if subprocess.run([dest, command, "--help"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0:
                return dest
        time.sleep(6)  # probably being relinked right now
    sys.exit(f"no working hammer binary with '{command}' at {path}")
