"""The Debian package and the libraries of the hammer under test, for the packaging tests.

build_deb() runs cpack on the build tree that holds $HAMMER (the binary the other tests run),
once per test session, into a temporary directory: the package holds exactly that build.
"""
import atexit
import functools
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness import HAMMER


def build_dir():
    """The CMake build tree of $HAMMER (where CMakeCache.txt, docs/ and CPackConfig.cmake are)."""
    tree = Path(HAMMER).resolve().parent
    if not (tree / "CMakeCache.txt").is_file():
        raise AssertionError(f"{tree} is not the CMake build tree of $HAMMER; run `make build` "
                             "and point HAMMER at build/release/hammer")
    return tree


@functools.lru_cache(maxsize=None)
def build_deb():
    """Path of hammer_<version>_<arch>.deb made from build_dir() (cpack -G DEB)."""
    out = Path(tempfile.mkdtemp(prefix="hammer-deb-"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    proc = subprocess.run(["cpack", "-G", "DEB", "--config",
                           str(build_dir() / "CPackConfig.cmake"), "-B", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    debs = list(out.glob("hammer_*.deb"))
    assert len(debs) == 1, f"cpack made {debs}\n{proc.stdout}"
    return debs[0]


def control_field(deb, field):
    return subprocess.run(["dpkg-deb", "--field", str(deb), field], capture_output=True,
                          text=True, check=True).stdout.strip()


def package_names(relation_field):
    """{'libc6', 'libssl3', ...} from 'libc6 (>= 2.34), libssl3 (>= 3.0.0) | libssl3t64'."""
    names = set()
    for relation in filter(None, (r.strip() for r in relation_field.split(","))):
        alternatives = [re.match(r"[a-z0-9][a-z0-9+.-]*", a.strip()).group(0)
                        for a in relation.split("|")]
        assert len(alternatives) == 1, f"unexpected alternative in {relation!r}"
        names.add(alternatives[0])
    return names


def linked_libraries(binary):
    """{soname: resolved path} of every shared library `ldd` reports for `binary`."""
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True,
                         check=True).stdout
    libraries = {}
    for line in out.splitlines():
        assert "not found" not in line, f"unresolved library: {line.strip()}"
        m = re.match(r"\s*(\S+) => (\S+) \(0x", line)
        if m:
            libraries[m.group(1)] = m.group(2)
        elif m := re.match(r"\s*(/\S+) \(0x", line):  # the dynamic loader
            libraries[Path(m.group(1)).name] = m.group(1)
    return libraries


def owning_package(path):
    """The Debian package that ships `path` (dpkg -S), trying the /usr-merged spellings."""
    candidates = [path, str(Path(path).resolve())]
    for p in list(candidates):
        if p.startswith("/usr/"):
            candidates.append(p[4:])
        else:
            candidates.append("/usr" + p)
    for p in candidates:
        proc = subprocess.run(["dpkg-query", "--search", p], capture_output=True, text=True)
        if proc.returncode == 0:
            # "libssl3:amd64: /usr/lib/x86_64-linux-gnu/libssl.so.3"
            return proc.stdout.split(":", 1)[0].split(",")[0].strip()
    raise AssertionError(f"no Debian package ships {path} (tried {candidates})")
