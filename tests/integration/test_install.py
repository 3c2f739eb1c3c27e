"""`cmake --install` (what `make install PREFIX=... DESTDIR=...` runs) from the build tree of the
hammer under test, staged into a temporary DESTDIR: every file lands where the programs that
read it look, and the installed binary, man pages and completions are the build's own.
"""
import filecmp
import os
import subprocess

from harness import HAMMER, ROOT
from packaging import build_dir

COMMANDS = ["serve", "load", "stats", "dark", "route", "bulk", "demo"]


def install(destdir, prefix):
    proc = subprocess.run(["cmake", "--install", str(build_dir()), "--prefix", prefix],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "DESTDIR": str(destdir)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    root = destdir / prefix.lstrip("/")
    return root, {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_install_places_binary_man_pages_completions_and_docs(tmp_path):
    root, files = install(tmp_path, "/opt/hammer-test")
    expected = {"bin/hammer", "share/man/man1/hammer.1",
                "share/bash-completion/completions/hammer",
                "share/fish/vendor_completions.d/hammer.fish",
                "share/zsh/site-functions/_hammer",  # zsh's own default outside /usr
                "share/doc/hammer/README.md", "share/doc/hammer/ARCHITECTURE.md"}
    expected |= {f"share/man/man1/hammer-{c}.1" for c in COMMANDS}
    expected |= {f"share/doc/hammer/docs/{p.relative_to(ROOT / 'docs')}"
                 for p in (ROOT / "docs").rglob("*") if p.is_file()}
    assert files == expected
    assert filecmp.cmp(root / "bin/hammer", HAMMER, shallow=False)
    assert os.access(root / "bin/hammer", os.X_OK)
    docs = build_dir() / "docs"
    assert filecmp.cmp(root / "share/man/man1/hammer-load.1", docs / "man1/hammer-load.1",
                       shallow=False)
    assert filecmp.cmp(root / "share/bash-completion/completions/hammer",
                       docs / "completions/hammer", shallow=False)
    # man reads the staged tree as a manual path and finds each command's page by name.
    found = subprocess.run(["man", "-M", str(root / "share/man"), "-w", "hammer-load"],
                           capture_output=True, text=True, timeout=30)
    assert found.stdout.strip() == str(root / "share/man/man1/hammer-load.1"), found.stderr


def test_install_into_usr_on_debian_puts_zsh_completion_where_debian_zsh_reads(tmp_path):
    _, files = install(tmp_path, "/usr")
    zsh = {f for f in files if "zsh" in f}
    if os.path.exists("/etc/debian_version"):
        assert zsh == {"share/zsh/vendor-completions/_hammer"}
    else:
        assert zsh == {"share/zsh/site-functions/_hammer"}
