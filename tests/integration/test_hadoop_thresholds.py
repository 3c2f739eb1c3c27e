"""A distributed run's one verdict: `hammer stats --threshold` over the output of 4 `hammer load`
mappers on Hadoop's local runner (Hadoop 3.4, JDK 17), as the Hadoop recipe
(integrations/hadoop/run-load-test.sh) ends.

Each job splits a URL list against `hammer serve` into 4 map tasks of 25 lines
(NLineInputFormat), so which requests each mapper sends is known:

- merge fails: every mapper sends 3 requests to /status/500, and the fourth also 10 to
  /delay/300. `errors<=10` passes on every mapper alone (3) and fails on the merge (12);
  `p99<250ms` passes on the first mapper alone and fails on the merge (10 slow of 100).
- merge passes: only the fourth mapper sends one request to /delay/300. `p99<250ms` fails on
  that mapper alone (1 slow of 25 is its p99) and passes on the merge (1 slow of 100 is above
  the p99).

Map-only jobs with `--emit partials` leave one part file per mapper (the slow mapper's is the one
naming /delay/300), so a mapper alone is judged from its own partials and the merge from all four; the recipe's own job (combiner and reducer)
is judged from its reducer output. Exit codes and the printed values are asserted.

Needs java 17 and mvn (the harness is built by scripts/jvm-deps.sh hadoop).
"""
import json
import re
import subprocess
import tempfile
from pathlib import Path

import pytest

from hadoop_harness import StreamingCluster, remove_tree, require_harness
from harness import HammerServe

MAPS = 4
PER_MAP = 25
COMMON_D = ["-D", "mapreduce.map.maxattempts=1", "-D", "mapreduce.reduce.maxattempts=1",
            "-D", "mapreduce.map.speculative=false", "-D", "mapreduce.reduce.speculative=false",
            "-D", f"mapreduce.input.lineinputformat.linespermap={PER_MAP}"]
NLINE = ["-inputformat", "org.apache.hadoop.mapred.lib.NLineInputFormat"]
RULES = ["p99<250ms", "errors<=10"]


@pytest.fixture(scope="module")
def serve():
    server = HammerServe("--threads", "4")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def hadoop():
    require_harness()
    work = Path(tempfile.mkdtemp(prefix="hammer-hadoop-thresholds-"))
    cluster = StreamingCluster("local", work)
    try:
        yield cluster
    finally:
        cluster.close()
        remove_tree(work)


def url_file(path, splits):
    """One split of PER_MAP URLs per mapper, in order (NLineInputFormat keeps the order)."""
    lines = []
    for split in splits:
        assert len(split) == PER_MAP
        lines.extend(split)
    path.write_text("".join(line + "\n" for line in lines))
    return path


def run_job(hadoop, name, urls, reduces, args):
    """StreamJob's generic -D options first, then its own."""
    job = hadoop.run(name, [urls],
                     [*COMMON_D, "-D", f"mapreduce.job.reduces={reduces}", *NLINE, *args])
    assert job.rc == 0, f"{name} failed (rc={job.rc}): {job.reply}\n{hadoop.log_tail()}"
    return job


def stats(hammer_bin, files, *extra):
    rules = [arg for rule in RULES for arg in ("--threshold", rule)]
    return subprocess.run([hammer_bin, "stats", "--json", *rules, *extra, *map(str, files)],
                          capture_output=True, text=True, timeout=60)


def verdicts(proc):
    """{rule: (passed, message)} from the stderr lines, and the same from the JSON."""
    printed = {}
    for line in proc.stderr.splitlines():
        m = re.match(r"  threshold (\S+)\s+(passed|FAILED)  (.*)$", line)
        if m:
            printed[m.group(1)] = (m.group(2) == "passed", m.group(3))
    document = json.loads(proc.stdout)
    written = {t["rule"]: (t["passed"], t["message"]) for t in document["thresholds"]}
    assert written == printed, (proc.stderr, document["thresholds"])
    return printed


def p99_ms(message):
    m = re.match(r"p99 = ([\d.]+)(ms|us|s), limit < 250ms", message)
    assert m, message
    return float(m.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m.group(2)]


def slow_part(parts):
    """The one part file of the mapper that sent /delay/300 (Hadoop numbers map tasks by split
    size, not by their order in the input)."""
    assert len(parts) == MAPS
    slow = [part for part in parts if "/delay/300" in part.read_text()]
    assert len(slow) == 1, parts
    return slow[0]


@pytest.fixture(scope="module")
def merge_fails_input(serve, tmp_path_factory):
    fast, failing, slow = serve.url("/"), serve.url("/status/500"), serve.url("/delay/300")
    splits = [[fast] * 22 + [failing] * 3 for _ in range(MAPS - 1)]
    splits.append([slow] * 10 + [fast] * 12 + [failing] * 3)
    return url_file(tmp_path_factory.mktemp("merge-fails") / "urls.txt", splits)


def test_every_mapper_passes_errors_and_the_merge_fails(hadoop, hammer_bin, merge_fails_input):
    job = run_job(hadoop, "merge-fails", merge_fails_input, 0,
                  ["-mapper", f"{hammer_bin} load -c 10 --emit partials"])
    parts = job.part_files()
    slow = slow_part(parts)

    for part in parts:
        alone = stats(hammer_bin, [part])
        results = verdicts(alone)
        assert results["errors<=10"] == (True, "errors = 3, limit <= 10"), alone.stderr
        if part != slow:
            assert alone.returncode == 0, alone.stderr
            assert results["p99<250ms"][0] and p99_ms(results["p99<250ms"][1]) < 250

    merged = stats(hammer_bin, parts)
    assert merged.returncode == 3, merged.stderr
    results = verdicts(merged)
    assert results["errors<=10"] == (False, "errors = 12, limit <= 10 (over by 2, 20%)")
    passed, message = results["p99<250ms"]
    assert not passed and p99_ms(message) >= 300, message
    assert "(over by " in message
    assert "hammer stats: 2 of 2 thresholds failed" in merged.stderr


def test_recipe_judges_the_reducer_output(hadoop, hammer_bin, merge_fails_input, tmp_path):
    """The recipe's job shape (mapper, combiner, reducer), judged from its reducer output."""
    job = run_job(hadoop, "recipe", merge_fails_input, 2,
                  ["-mapper", f"{hammer_bin} load -c 10",
                   "-combiner", f"{hammer_bin} stats --combine",
                   "-reducer", f"{hammer_bin} stats --reducer"])
    report = tmp_path / "report.html"
    merged = stats(hammer_bin, job.part_files(), "--html", report)
    assert merged.returncode == 3, merged.stderr
    assert "malformed" not in merged.stderr
    results = verdicts(merged)
    assert results["errors<=10"] == (False, "errors = 12, limit <= 10 (over by 2, 20%)")
    assert p99_ms(results["p99<250ms"][1]) >= 300
    assert json.loads(merged.stdout)["requests"] == MAPS * PER_MAP
    html = report.read_text()
    assert "2 of 2 failed." in html
    assert ('<td class="key">errors&lt;=10</td><td>12</td><td class="err">FAILED</td>'
            '<td class="detail">errors = 12, limit &lt;= 10 (over by 2, 20%)</td>') in html


def test_one_mapper_fails_alone_and_the_merge_passes(hadoop, hammer_bin, serve, tmp_path):
    fast, slow = serve.url("/"), serve.url("/delay/300")
    splits = [[fast] * PER_MAP for _ in range(MAPS - 1)]
    splits.append([fast] * 24 + [slow])
    urls = url_file(tmp_path / "urls.txt", splits)
    job = run_job(hadoop, "merge-passes", urls, 0,
                  ["-mapper", f"{hammer_bin} load -c 10 --emit partials"])
    parts = job.part_files()
    alone = stats(hammer_bin, [slow_part(parts)])
    assert alone.returncode == 3, alone.stderr
    passed, message = verdicts(alone)["p99<250ms"]
    assert not passed and p99_ms(message) >= 300, message

    merged = stats(hammer_bin, parts)
    assert merged.returncode == 0, merged.stderr
    results = verdicts(merged)
    passed, message = results["p99<250ms"]
    assert passed and p99_ms(message) < 250, message
    assert results["errors<=10"] == (True, "errors = 0, limit <= 10")
    assert "thresholds failed" not in merged.stderr
