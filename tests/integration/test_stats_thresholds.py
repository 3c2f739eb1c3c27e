"""`hammer stats --threshold`: the verdict of runs merged from several machines, here 4 `hammer
load` runs against `hammer serve` whose partials (or records) are merged by one `hammer stats`.

The fourth run alone sends the slow requests (/delay/300) and every run sends 3 failing ones
(/status/500), so the first run alone passes `p99<250ms` and `errors<=10` while the merge fails
both; with a single slow request in 100, the fourth run alone fails p99 and the merge passes.
Exit codes, the printed lines, --summary-json and the rule checks at start-up are asserted.
"""
import json
import re
import subprocess

import pytest

from harness import HAMMER, HammerServe, url_lines

RUNS = 4


@pytest.fixture(scope="module")
def serve():
    server = HammerServe("--threads", "4")
    yield server
    server.stop()


def load(serve_urls, *extra):
    proc = subprocess.run([HAMMER, "load", "-c", "10", "-q", *extra, "-"],
                          input=url_lines(*serve_urls), capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def stats(tmp_path, outputs, *args):
    files = []
    for index, text in enumerate(outputs):
        path = tmp_path / f"run-{index}.out"
        path.write_text(text)
        files.append(str(path))
    return subprocess.run([HAMMER, "stats", *args, *files], capture_output=True, text=True,
                          timeout=60)


def printed(proc):
    """{rule: (passed, message)} of the '  threshold RULE passed|FAILED  MESSAGE' lines."""
    found = {}
    for line in proc.stderr.splitlines():
        m = re.match(r"  threshold (\S+)\s+(passed|FAILED)  (.*)$", line)
        if m:
            found[m.group(1)] = (m.group(2) == "passed", m.group(3))
    return found


def p99_ms(message):
    m = re.match(r"p99 = ([\d.]+)(ms|us|s), limit < 250ms", message)
    assert m, message
    return float(m.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m.group(2)]


RULES = ["--threshold", "p99<250ms", "--threshold", "errors<=10"]


@pytest.fixture(scope="module")
def four_runs(serve):
    """Per run: the partials and the records of the same URL list."""
    fast, failing, slow = serve.url("/"), serve.url("/status/500"), serve.url("/delay/300")
    lists = [[fast] * 22 + [failing] * 3 for _ in range(RUNS - 1)]
    lists.append([slow] * 10 + [fast] * 12 + [failing] * 3)
    return ([load(urls, "--emit", "partials") for urls in lists],
            [load(urls) for urls in lists])


@pytest.mark.parametrize("form", ["partials", "records"])
def test_first_run_passes_alone_and_the_merge_fails(four_runs, tmp_path, form):
    outputs = four_runs[0] if form == "partials" else four_runs[1]
    alone = stats(tmp_path, outputs[:1], *RULES, "--table")
    assert alone.returncode == 0, alone.stderr
    results = printed(alone)
    assert results["errors<=10"] == (True, "errors = 3, limit <= 10")
    assert results["p99<250ms"][0] and p99_ms(results["p99<250ms"][1]) < 250

    summary = tmp_path / "summary.json"
    merged = stats(tmp_path, outputs, *RULES, "--table", "--summary-json", str(summary))
    assert merged.returncode == 3, merged.stderr
    results = printed(merged)
    assert results["errors<=10"] == (False, "errors = 12, limit <= 10 (over by 2, 20%)")
    passed, message = results["p99<250ms"]
    assert not passed and p99_ms(message) >= 300 and "(over by " in message
    assert "hammer stats: 2 of 2 thresholds failed" in merged.stderr
    assert "TOTAL" in merged.stdout  # the table is still written
    document = json.loads(summary.read_text())
    assert document["requests"] == 100 and document["failed"] == 12
    assert [(t["rule"], t["passed"], t["message"]) for t in document["thresholds"]] == [
        ("p99<250ms", False, message),
        ("errors<=10", False, "errors = 12, limit <= 10 (over by 2, 20%)")]


def test_reducer_output_gives_the_same_verdict(four_runs, tmp_path):
    partials = four_runs[0]
    reduced = stats(tmp_path, partials, "--reducer")
    assert reduced.returncode == 0, reduced.stderr
    from_partials = stats(tmp_path, partials, *RULES)
    from_reducer = stats(tmp_path, [reduced.stdout], *RULES, "--json")
    assert from_reducer.returncode == from_partials.returncode == 3
    assert printed(from_reducer) == printed(from_partials)
    assert "malformed" not in from_reducer.stderr


def test_fourth_run_fails_alone_and_the_merge_passes(serve, tmp_path):
    fast, slow = serve.url("/"), serve.url("/delay/300")
    outputs = [load([fast] * 25, "--emit", "partials") for _ in range(RUNS - 1)]
    outputs.append(load([fast] * 24 + [slow], "--emit", "partials"))
    alone = stats(tmp_path, outputs[-1:], "--threshold", "p99<250ms", "--json")
    assert alone.returncode == 3, alone.stderr
    passed, message = printed(alone)["p99<250ms"]
    assert not passed and p99_ms(message) >= 300
    merged = stats(tmp_path, outputs, "--threshold", "p99<250ms", "--json")
    assert merged.returncode == 0, merged.stderr
    passed, message = printed(merged)["p99<250ms"]
    assert passed and p99_ms(message) < 250
    assert json.loads(merged.stdout)["thresholds"][0]["passed"] is True


@pytest.mark.parametrize("args,message", [
    (["--threshold", "rps>1000"],
     "hammer stats: --threshold: threshold 'rps>1000': rps needs a run time, which records and "
     "partials do not carry (judge it in hammer load; use pN, max, mean or errors)"),
    (["--threshold", "p99<250"],
     "hammer stats: --threshold: threshold 'p99<250': give the latency a unit, e.g. 250ms"),
    (["--combine", "--threshold", "p99<1s"],
     "hammer stats: --threshold judges a merge, and a combiner sees part of a run: judge its "
     "output instead (hammer stats --threshold RULE < partials)"),
    (["--reducer", "--summary-json", "x.json"],
     "hammer stats: --summary-json goes with --json, --table, --hdr or no mode (--reducer, "
     "--combine and --csv keep no key rows)"),
])
def test_rules_are_checked_before_reading(args, message):
    proc = subprocess.run([HAMMER, "stats", *args], input="k\t0.001\n", capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 2
    assert proc.stderr.strip() == message
