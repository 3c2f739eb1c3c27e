"""scripts/deps.sh, the first step of every make target: it installs only what is missing.

On this machine everything `make test` needs is installed, so the script must do nothing and
say nothing, as root and as an unprivileged user (who could not install anything). On a system
without dpkg it must list what is missing by name, for another package manager, and fail.
"""
import os
import shutil
import subprocess

import pytest

from harness import ROOT

DEPS = ROOT / "scripts" / "deps.sh"
BUILD_PACKAGES = ["g++", "make", "cmake", "ninja-build", "pkg-config", "libssl-dev", "libre2-dev",
                  "libcli11-dev", "libfmt-dev", "libsimdjson-dev", "nlohmann-json3-dev",
                  "zlib1g-dev", "libzookeeper-mt-dev"]


# Not bench: `make test` does not install the benchmarks' peers, so a CI machine lacks them.
@pytest.mark.parametrize("target", ["build", "package", "test"])
def test_nothing_is_installed_or_printed_when_everything_is_present(target):
    proc = subprocess.run([str(DEPS), target], capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_an_unprivileged_user_with_everything_present_needs_nothing(tmp_path):
    if os.geteuid() != 0:
        user = []  # already unprivileged
    else:
        user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    proc = subprocess.run([*user, str(DEPS), "build"], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env={**os.environ, "HOME": str(tmp_path)})
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


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
