"""The build a user or a packager types first: `cmake -S . -B b -DCMAKE_BUILD_TYPE=Release`.

make test builds GCC -O2 and clang -O2 trees with warnings as errors; these cheap checks cover
what those do not. A plain configure must not need the test tools (GoogleTest and Google
Benchmark are made unfindable here), must not turn warnings into errors, and must not build the
tests. And the files where GCC 12 at -O3 reports false -Wrestrict warnings inside std::string
(zk_session.cc once stopped that build; threshold.cc warned in a plain Release build) compile at
-O3 with -Werror.
"""
import json
import re
import subprocess

from harness import ROOT

NO_TEST_TOOLS = ["-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON",
                 "-DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON"]


def configure(tree, *options):
    proc = subprocess.run(["cmake", "-S", str(ROOT), "-B", str(tree), "-G", "Ninja",
                           "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CXX_COMPILER=g++",
                           "-DCMAKE_C_COMPILER=gcc", *NO_TEST_TOOLS, *options],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_plain_release_configure_needs_no_test_tools_and_keeps_warnings_warnings(tmp_path):
    configure(tmp_path)
    cache = (tmp_path / "CMakeCache.txt").read_text()
    assert re.search(r"^BUILD_TESTING:BOOL=OFF$", cache, re.M)
    assert re.search(r"^HAMMER_WERROR:BOOL=OFF$", cache, re.M)
    commands = json.loads((tmp_path / "compile_commands.json").read_text())
    assert commands and not [c["file"] for c in commands if "-Werror" in c["command"]]
    assert not [c["file"] for c in commands if "/tests/" in c["file"]]
    assert all(" -O3 " in c["command"] for c in commands)


def test_the_files_gcc_12_warned_about_at_o3_compile_with_werror(tmp_path):
    configure(tmp_path, "-DHAMMER_WERROR=ON")
    targets = [f"CMakeFiles/hammer_lib.dir/src/hammer/{name}.cc.o"
               for name in ("net/zk_session", "stats/threshold")]
    proc = subprocess.run(["cmake", "--build", str(tmp_path), "--target", *targets],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "warning" not in proc.stdout
