"""--version, the man pages, the shell completions and the reference pages of the built hammer.

The man pages and completions in the build tree (docs/, written at build time by
cmake/generate_docs.cmake) must be exactly what the binary prints now, must list every option
`--help` lists, and must work in the real programs that read them: groff renders the pages
without a warning, and bash, zsh and fish complete commands, options and file names with them.
--version must name the commit the binary was built from, its build type and its features.
The reference pages in the source tree (docs/<command>.md) must document every option `--help`
lists, and README.md stays a map: at most 300 lines, a link to every command's page, and no
link in it or in the other documents that leads nowhere.
"""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from completion_shells import bash_complete, fish_complete, zsh_complete
from harness import HAMMER, ROOT
from packaging import build_dir

DOCS = build_dir() / "docs"


def hammer(*args):
    proc = subprocess.run([HAMMER, *args], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def commands():
    listing = hammer("--help").split("\ncommands:\n", 1)[1]
    return re.findall(r"^  ([a-z][a-z0-9-]*) ", listing, re.M)


def help_options(command):
    """Every option name of `hammer COMMAND --help` (its Options section), e.g. -c, --rate."""
    section = hammer(command, "--help").split("\nOptions:\n", 1)[1].split("\n\n", 1)[0]
    names = []
    # "  -c,--concurrency INT=100   requests in flight"; a long entry's description may follow
    # on its own, further indented line.
    for m in re.finditer(r"^  (-\S+)", section, re.M):
        names += m.group(1).split(",")
    return names


def cache_value(name):
    text = (build_dir() / "CMakeCache.txt").read_text()
    return re.search(rf"^{name}:\w+=(.*)$", text, re.M).group(1)


# --- --version --------------------------------------------------------------------------------

def test_version_names_version_commit_build_type_and_features():
    lines = hammer("--version").splitlines()
    project_version = re.search(r"project\(hammer VERSION (\S+)",
                                (ROOT / "CMakeLists.txt").read_text()).group(1)
    assert lines[0] == f"hammer {project_version}"
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()
    commit = re.fullmatch(r"commit:   ([0-9a-f]{12})(-dirty)?", lines[1])
    assert commit, lines[1]
    assert commit.group(1) == head, "hammer was built from another commit: rebuild it"
    build = re.fullmatch(r"build:    (\w+), (GNU|Clang) [0-9.]+(, sanitizers: .*)?", lines[2])
    assert build and build.group(1) == cache_value("CMAKE_BUILD_TYPE"), lines[2]
    assert lines[3].startswith("features: ")
    assert {"tls", "http2", "zookeeper"} <= set(lines[3][10:].split()), lines[3]


def test_top_level_help_says_what_serve_speaks():
    serve = next(line for line in hammer("--help").splitlines() if line.startswith("  serve "))
    assert "HTTP/1.1" in serve and "HTTP/2" in serve and "TLS" in serve, serve


def test_every_command_prints_the_same_version():
    expected = hammer("--version")
    for command in commands():
        assert hammer(command, "--version") == expected, command


def test_commit_is_unknown_outside_a_git_checkout(tmp_path):
    """A tarball build: the source tree is not a git checkout, or lies inside another one."""
    tree = tmp_path / "hammer-0.1.0"
    tree.mkdir()
    out = tmp_path / "values.cc"

    def commit_written():
        subprocess.run(["cmake", f"-DSOURCE_DIR={tree}", f"-DOUT={out}", "-DVERSION=0.1.0",
                        "-DBUILD_TYPE=Release", "-DCOMPILER=GNU 12", "-DFEATURES=tls",
                        "-P", str(ROOT / "cmake" / "build_info.cmake")], check=True)
        values = re.search(r"kBuildInfo = \{(.*?)\}", out.read_text(), re.S).group(1)
        return re.findall(r'"([^"]*)"', values)[1]  # version, commit, build type, ...

    assert commit_written() == "unknown"
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)  # an enclosing checkout
    out.unlink()
    assert commit_written() == "unknown"


# --- man pages -----------------------------------------------------------------------------------

def test_man_pages_are_what_the_binary_prints():
    pages = {p.name for p in (DOCS / "man1").iterdir()}
    assert pages == {"hammer.1"} | {f"hammer-{c}.1" for c in commands()}
    assert (DOCS / "man1" / "hammer.1").read_text() == hammer("--help-man")
    for command in commands():
        assert (DOCS / "man1" / f"hammer-{command}.1").read_text() == \
            hammer(command, "--help-man"), command


def render(page):
    """The page as man shows it, and groff's warnings (-ww) about its source."""
    proc = subprocess.run(["groff", "-ww", "-man", "-Tutf8", "-rLL=200n", str(page)],
                          capture_output=True, text=True, timeout=30, check=True)
    text = re.sub(r".\x08", "", proc.stdout)  # overstrike bold and underline
    return text.replace("\u2010", "-").replace("\u2212", "-"), proc.stderr


@pytest.mark.parametrize("command", commands())
def test_man_page_renders_every_option_of_help(command):
    text, warnings = render(DOCS / "man1" / f"hammer-{command}.1")
    assert warnings == ""
    assert re.search(rf"^NAME\n +hammer-{command} - \S", text, re.M), text[:300]
    missing = [o for o in help_options(command) if not re.search(rf"(^|[ ,]){o}\b", text, re.M)]
    assert missing == []


def test_hammer_man_page_lists_every_command():
    text, warnings = render(DOCS / "man1" / "hammer.1")
    assert warnings == ""
    for command in commands():
        assert f"hammer-{command}(1)" in text
        assert re.search(rf"^ +{command}\b", text, re.M), command


# --- completions -----------------------------------------------------------------------------

def test_completion_scripts_are_what_the_binary_prints():
    for shell, name in [("bash", "hammer"), ("zsh", "_hammer"), ("fish", "hammer.fish")]:
        assert (DOCS / "completions" / name).read_text() == hammer("--completion", shell)


def test_bash_completes_commands_every_option_and_files(tmp_path):
    script = DOCS / "completions" / "hammer"
    assert bash_complete(script, ["hammer", "lo"]) == ["load"]
    assert set(bash_complete(script, ["hammer", ""])) >= set(commands())
    for command in commands():
        offered = bash_complete(script, ["hammer", command, "-"])
        assert sorted(offered) == sorted(help_options(command)), command
    (tmp_path / "ca-only.pem").write_text("")
    (tmp_path / "cb.txt").write_text("")
    assert bash_complete(script, ["hammer", "load", "--cacert", "ca"], cwd=tmp_path) == \
        ["ca-only.pem"]
    assert bash_complete(script, ["hammer", "load", "--rate", "c"], cwd=tmp_path) == []
    assert bash_complete(script, ["hammer", "--completion", "z"]) == ["zsh"]


def test_zsh_completes_commands_options_and_files(tmp_path):
    if shutil.which("zsh") is None:
        pytest.fail("zsh is not installed (scripts/deps.sh test installs it)")
    subprocess.run(["zsh", "-n", str(DOCS / "completions" / "_hammer")], check=True)
    fpath = DOCS / "completions"
    assert zsh_complete("hammer lo", fpath) == "hammer load"
    assert zsh_complete("hammer load --concurr", fpath) == "hammer load --concurrency"
    assert zsh_complete("hammer stats --hdr-l", fpath) == "hammer stats --hdr-log"
    (tmp_path / "ca-only.pem").write_text("")
    assert zsh_complete("hammer load --cacert ca", fpath, cwd=tmp_path) == \
        "hammer load --cacert ca-only.pem"


def test_fish_completes_commands_options_and_files(tmp_path):
    if shutil.which("fish") is None:
        pytest.fail("fish is not installed (scripts/deps.sh test installs it)")
    script = DOCS / "completions" / "hammer.fish"
    assert fish_complete("hammer lo", script) == ["load"]
    for command in commands():
        longs = {o for o in help_options(command) if o.startswith("--")}
        assert set(fish_complete(f"hammer {command} --", script)) == longs, command
    (tmp_path / "ca-only.pem").write_text("")
    assert fish_complete("hammer load --cacert ca", script, cwd=tmp_path) == ["ca-only.pem"]


# --- reference pages and README ------------------------------------------------------------------

README_MAX_LINES = 300
# The documents whose links are checked: the README, the reference pages and the two other maps.
LINKED_DOCUMENTS = ["README.md", "ARCHITECTURE.md", "bench/RESULTS.md",
                    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]


def mentions(text, option):
    """Whether TEXT names OPTION as a whole word: '-c' is not in '--cacert', '--key' not in
    '--key-pattern'."""
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None


@pytest.mark.parametrize("command", commands())
def test_reference_page_documents_every_option_of_help(command):
    page = ROOT / "docs" / f"{command}.md"
    assert page.is_file(), f"no reference page {page.relative_to(ROOT)} for hammer {command}"
    text = page.read_text()
    missing = [o for o in help_options(command) if not mentions(text, o)]
    assert missing == [], f"docs/{command}.md does not document {missing}"


def heading_anchors(markdown):
    """The anchors GitHub gives a document's headings: lower case, punctuation dropped, spaces
    to hyphens ("## HTTP/2 engine" -> "http2-engine")."""
    anchors = set()
    prose = re.sub(r"```.*?```", "", markdown, flags=re.S)
    for title in re.findall(r"^#{1,6} +(.+?) *$", prose, re.M):
        title = re.sub(r"[`*]", "", title).strip().lower()
        anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


def relative_links(markdown):
    """The targets of the document's inline links that are not URLs, code excluded."""
    prose = re.sub(r"```.*?```", "", markdown, flags=re.S)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", prose)
            if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def broken_links(document):
    path = ROOT / document
    text = path.read_text()
    broken = []
    for target in relative_links(text):
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            broken.append(target)
        elif anchor and (dest.suffix != ".md" or anchor not in heading_anchors(dest.read_text())):
            broken.append(target)
    return broken


def test_readme_is_a_map_of_at_most_300_lines_linking_every_command():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= README_MAX_LINES, "README.md is a map: move details to docs/"
    for command in commands():
        assert f"](docs/{command}.md)" in text, f"README.md does not link docs/{command}.md"


@pytest.mark.parametrize("document", LINKED_DOCUMENTS)
def test_links_between_documents_resolve(document):
    assert broken_links(document) == []
