"""The Debian package (cpack -G DEB of the build under test), installed for real.

`dpkg -i` puts it into this machine's /usr; the installed hammer, its man page and its
completions are used where bash, zsh, fish and man look for them; `dpkg --purge` must then leave
none of its files behind. Because this changes the real system, the install-use-remove test:
- needs root (the suite's machines have it) and says so otherwise;
- holds an exclusive lock for its whole duration, so that two runs (two checkouts, two CI jobs
  on one machine) never interleave, and waits for dpkg's own lock rather than failing on it;
- never touches a `hammer` package it did not install: it leaves a marker before installing,
  purges a package an earlier, killed run left behind, and refuses any other;
- removes the package on every way out (finally).
"""
import fcntl
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from completion_shells import bash_complete, fish_complete, zsh_complete
from harness import HAMMER
from packaging import (build_deb, control_field, linked_libraries, owning_package,
                       package_names)

LOCK = Path("/run/lock/hammer-deb-test.lock")
MARKER = Path("/var/lib/hammer-deb-test.installed")  # "this run of the test installed hammer"


def test_depends_name_exactly_the_packages_of_the_linked_libraries():
    deb = build_deb()
    depends = package_names(control_field(deb, "Depends"))
    providers = {owning_package(path) for path in linked_libraries(HAMMER).values()}
    assert depends == providers
    assert package_names(control_field(deb, "Recommends")) == {"ca-certificates"}
    assert control_field(deb, "Package") == "hammer"


def dpkg(*args, timeout=300.0):
    """Runs dpkg, waiting (up to `timeout`) while another package manager holds its lock."""
    deadline = time.monotonic() + timeout
    while True:
        proc = subprocess.run(["dpkg", *args], capture_output=True, text=True)
        locked = proc.returncode != 0 and "lock" in proc.stderr
        if not locked or time.monotonic() > deadline:
            assert proc.returncode == 0, f"dpkg {' '.join(args)}: {proc.stderr}"
            return proc.stdout
        time.sleep(1)


def installed_version():
    proc = subprocess.run(["dpkg-query", "--show", "--showformat=${Status} ${Version}", "hammer"],
                          capture_output=True, text=True)
    m = re.fullmatch(r"install ok installed (\S+)", proc.stdout.strip())
    return m.group(1) if m else None


def run(args, **kwargs):
    proc = subprocess.run(args, capture_output=True, text=True, timeout=60, **kwargs)
    assert proc.returncode == 0, f"{args}: {proc.stderr}"
    return proc.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="dpkg -i needs root (CI and the dev machine have it)")
def test_install_use_and_purge(tmp_path):
    deb = build_deb()
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run of this test: wait for it to finish
        if installed_version() is not None:
            assert MARKER.exists(), ("a hammer package this test did not install is on this "
                                     "machine; remove it (dpkg --purge hammer) to run the test")
            dpkg("--purge", "hammer")  # left by an earlier run that was killed
        MARKER.write_text(f"{deb}\n")
        try:
            dpkg("--install", str(deb))
            files = [f for f in dpkg("--listfiles", "hammer").splitlines()
                     if f and Path(f).is_file()]
            use_installed_package(tmp_path)
        finally:
            dpkg("--purge", "hammer")
            MARKER.unlink()
    assert installed_version() is None
    assert [f for f in files if os.path.lexists(f)] == []
    assert "/usr/bin/hammer" in files


def use_installed_package(tmp_path):
    assert installed_version() == control_field(build_deb(), "Version")
    assert run(["/usr/bin/hammer", "--version"]) == run([HAMMER, "--version"])
    assert run(["/usr/bin/hammer", "load", "--version"]) == run([HAMMER, "--version"])

    # man finds the pages by name in its standard path, and renders them.
    assert run(["man", "-w", "hammer-load"]).strip() == "/usr/share/man/man1/hammer-load.1"
    assert run(["man", "-w", "hammer"]).strip() == "/usr/share/man/man1/hammer.1"
    page = run(["man", "-P", "cat", "hammer-load"], env={**os.environ, "MANWIDTH": "200"})
    assert "hammer-load - send requests from a URL list" in page.replace("\u2010", "-")

    # bash: the file bash-completion loads for `hammer`; zsh and fish find theirs by themselves.
    bash_script = Path("/usr/share/bash-completion/completions/hammer")
    assert bash_complete(bash_script, ["hammer", "lo"]) == ["load"]
    assert bash_complete(bash_script, ["hammer", "load", "--conc"]) == ["--concurrency"]
    assert zsh_complete("hammer lo") == "hammer load"  # fpath has /usr/share/zsh/vendor-completions
    assert fish_complete("hammer lo") == ["load"]  # from /usr/share/fish/vendor_completions.d

    docs = Path("/usr/share/doc/hammer")
    assert (docs / "README.md").is_file() and (docs / "ARCHITECTURE.md").is_file()
    assert (docs / "docs" / "dark-znodes.md").is_file()
