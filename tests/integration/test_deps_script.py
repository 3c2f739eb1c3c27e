"""scripts/deps.sh, the first step of every make target: it installs only what is missing.

On this machine everything `make test` needs is installed, so the script must do nothing and
say nothing, as root and as an unprivileged user (who could not install anything). An
unprivileged user without sudo who lacks a package gets the one apt command to run and a
failure, and nothing is attempted. On a system without dpkg it must list what is missing by
name, for another package manager, and fail.
"""
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from harness import ROOT

DEPS = ROOT / "scripts" / "deps.sh"
BUILD_PACKAGES = ["g++", "make", "cmake", "ninja-build", "pkg-config", "libssl-dev", "libre2-dev",
                  "libcli11-dev", "libfmt-dev", "libsimdjson-dev", "nlohmann-json3-dev",
                  "zlib1g-dev", "libzookeeper-mt-dev", "libnghttp2-dev",
                  "libsnappy-dev", "libzstd-dev"]


# Not bench: `make test` does not install the benchmarks' peers, so a CI machine lacks them.
@pytest.mark.parametrize("target", ["build", "package", "test"])
def test_nothing_is_installed_or_printed_when_everything_is_present(target):
    proc = subprocess.run([str(DEPS), target], capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def as_unprivileged_user():
    """The command prefix that runs a program as nobody (or nothing when already unprivileged)."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.mark.parametrize("target", ["build", "test"])
def test_an_unprivileged_user_with_everything_present_needs_nothing(target, tmp_path):
    proc = subprocess.run([*as_unprivileged_user(), str(DEPS), target], capture_output=True,
                          text=True, timeout=120, cwd="/",
                          env={**os.environ, "HOME": str(tmp_path)})
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


# A named double for "cmake is not installed": a dpkg-query that reports cmake unknown and asks
# the real one about every other package (this machine has cmake, and removing it would break
# every other build here).
DPKG_QUERY_WITHOUT_CMAKE = """#!/bin/sh
for arg; do package=$arg; done
if [ "$package" = cmake ]; then
  echo "dpkg-query: no packages found matching cmake" >&2
  exit 1
fi
exec /usr/bin/dpkg-query "$@"
"""


def test_an_unprivileged_user_without_sudo_gets_the_apt_command_and_a_failure():
    # A PATH with every command of /usr/bin except cmake (the missing package) and sudo (the
    # user has no way to become root), readable by nobody.
    with tempfile.TemporaryDirectory(prefix="hammer-deps-") as tmp:
        shims = Path(tmp) / "bin"
        shims.mkdir()
        os.chmod(tmp, 0o755)
        for tool in Path("/usr/bin").iterdir():
            if tool.name not in ("cmake", "sudo", "dpkg-query"):
                (shims / tool.name).symlink_to(tool)
        (shims / "dpkg-query").write_text(DPKG_QUERY_WITHOUT_CMAKE)
        (shims / "dpkg-query").chmod(0o755)
        env = {"PATH": f"{shims}:/usr/sbin:/sbin", "HOME": tmp, "LANG": "C.UTF-8"}
        proc = subprocess.run([*as_unprivileged_user(), "/bin/bash", str(DEPS), "build"],
                              capture_output=True, text=True, timeout=120, cwd="/", env=env)
    # Exactly these three lines: nothing was installed or attempted (apt-get would have been
    # announced with "hammer: installing").
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "hammer: missing Debian packages: cmake",
        "Install them as root, then run make again:",
        "  sudo apt-get update && sudo apt-get install -y --no-install-recommends cmake",
    ]


def test_without_dpkg_what_is_missing_is_listed_by_name(tmp_path):
    # A system with bash and coreutils but no dpkg, compiler, CMake or pkg-config: only the
    # commands the script itself runs are on PATH.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "grep", "id"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    proc = subprocess.run([str(bin_dir / "bash"), str(DEPS), "build"], capture_output=True,
                          text=True, timeout=120, env={"PATH": str(bin_dir)})
    assert proc.returncode == 1, proc.stderr
    assert "This is not a Debian system" in proc.stderr
    listed = [line.strip().split(":")[0] for line in proc.stderr.splitlines()
              if line.startswith("  ")]
    assert listed == BUILD_PACKAGES
    assert "  cmake: command cmake" in proc.stderr
    assert "  libre2-dev: pkg-config module re2" in proc.stderr
    assert "  libzookeeper-mt-dev: header <zookeeper/zookeeper.h>" in proc.stderr
