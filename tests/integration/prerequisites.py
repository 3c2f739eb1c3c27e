"""What the integration tests need on the machine, checked before they start.

`make deps-test` installs and builds all of it (Debian packages, playwright-core, pyspark, the
Maven harnesses and their artifacts); a test run downloads nothing and builds nothing. When
something is missing, the test that needs it fails at once, saying what is missing and the
command that provides it, instead of being skipped (conftest.py fails the run on any skip not
in its short allow-list) or fetching it in the middle of the run.
"""
import importlib.util
import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JAVA17_HOME = os.environ.get("HAMMER_JAVA17_HOME", "/usr/lib/jvm/java-17-openjdk-amd64")
DEPS_TEST = "make deps-test"


def require(ok, what, command=DEPS_TEST):
    """Fails the calling test (or fixture) at once unless `ok`."""
    if not ok:
        import pytest  # imported here: benchmarks use this module without pytest
        pytest.fail(f"{what}: run `{command}`", pytrace=False)


def require_java17():
    require(os.access(os.path.join(JAVA17_HOME, "bin", "java"), os.X_OK),
            f"no JDK 17 at {JAVA17_HOME}", f"{DEPS_TEST} (scripts/deps.sh test)")


def require_program(name, package):
    require(shutil.which(name) is not None, f"{name} is not installed (Debian package {package})",
            f"{DEPS_TEST} (scripts/deps.sh test)")


def require_module(name, command):
    require(importlib.util.find_spec(name) is not None, f"the Python module {name} is missing",
            command)


def built(tool_dir, jar):
    """True when `jar` (and its target/lib) exists and is newer than every source of the Maven
    project in `tool_dir`."""
    tool_dir, jar = Path(tool_dir), Path(jar)
    if not jar.is_file() or not (tool_dir / "target" / "lib").is_dir():
        return False
    sources = [tool_dir / "pom.xml", *(tool_dir / "src").glob("**/*")]
    return all(s.stat().st_mtime <= jar.stat().st_mtime for s in sources if s.is_file())


def require_built(tool_dir, jar, jvm_deps_target):
    """The Maven harness in `tool_dir` is built and up to date (scripts/jvm-deps.sh builds it)."""
    require_java17()
    require(built(tool_dir, jar), f"{Path(jar).relative_to(ROOT)} is missing or older than its "
            "sources", f"scripts/jvm-deps.sh {jvm_deps_target}")
