"""One summary schema (docs/summary.schema.json, "hammer.summary.v1") for `hammer load
--summary-json`, `hammer stats --json` and `hammer bulk --summary-json` (validated in test_bulk,
its latency that of the bulk requests),
checked with the python jsonschema validator; and every record form `hammer load` writes read
by `hammer stats --csv`, `hammer stats --json` and the seed's Ruby reducer."""
import csv
import io
import json
import subprocess

import jsonschema

from harness import ROOT, run_hammer

SCHEMA = json.loads((ROOT / "docs" / "summary.schema.json").read_text())
SEED_REDUCER = ROOT / "tests" / "fixtures" / "seed" / "stats_aggregator.rb"


def validate(document):
    jsonschema.validate(document, SCHEMA)
    assert document["requests"] == document["succeeded"] + document["failed"]
    for key in document.get("keys", []):
        assert key["requests"] == key["succeeded"] + key["failed"]
        assert sum(key["failures"].values()) == key["failed"]
    assert sum(document["failures"].values()) == document["failed"]


def test_the_schema_rejects_what_it_should():
    bad = {"schema": "hammer.summary.v1", "command": "load", "requests": 1, "succeeded": 1,
           "failed": 0, "failures": {}, "latency": {"p999_ms": 1.0}, "thresholds": []}
    try:
        jsonschema.validate(bad, SCHEMA)
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("a latency in the old milliseconds form passed the schema")


def test_load_and_stats_write_the_same_schema_and_figures(serve, tmp_path):
    urls = [serve.url("/")] * 6 + [serve.url("/status/503")] * 3 + ["gopher://127.0.0.1/x"]
    summary = tmp_path / "summary.json"
    r = run_hammer(["load", *urls, "-c", "2", "-t", "1", "--failure-types", "--timestamps",
                    "--threshold", "p99<10s", "--threshold", "errors<1%",
                    "--summary-json", str(summary)])
    assert r.returncode == 3, r.stderr  # errors<1% fails
    load = json.loads(summary.read_text())
    validate(load)
    assert load["command"] == "load"
    assert (load["requests"], load["succeeded"], load["failed"]) == (10, 6, 4)
    assert load["failures"] == {"http_5xx": 3, "invalid_url": 1}
    lat = load["latency"]
    assert 0 < lat["min_us"] <= lat["p50_us"] <= lat["p99_9_us"] <= lat["max_us"]
    assert lat["min_us"] <= lat["mean_us"] <= lat["max_us"]
    assert [(t["rule"], t["passed"]) for t in load["thresholds"]] == \
        [("p99<10s", True), ("errors<1%", False)]

    records = tmp_path / "records.tsv"
    records.write_text(r.stdout)
    r = run_hammer(["stats", "--json", str(records)])
    assert r.returncode == 0, r.stderr
    stats = json.loads(r.stdout)
    validate(stats)
    assert stats["command"] == "stats" and stats["malformed_lines"] == 0
    # The same requests, outcomes and failure types from the records as from the run itself.
    for field in ("requests", "succeeded", "failed", "failures"):
        assert stats[field] == load[field], field
    by_key = {k["key"]: k for k in stats["keys"]}
    for key in load["keys"]:
        for field in ("requests", "succeeded", "failed", "failures"):
            assert by_key[key["key"]][field] == key[field], (key["key"], field)
    # Records carry microseconds: the latency figures agree exactly.
    assert stats["latency"]["min_us"] == lat["min_us"]
    assert stats["latency"]["max_us"] == lat["max_us"]


def test_stats_csv_reads_every_record_form(serve, tmp_path):
    forms = {"plain": [], "timestamps": ["--timestamps"], "typed": ["--failure-types"],
             "both": ["--timestamps", "--failure-types"]}
    for name, flags in forms.items():
        r = run_hammer(["load", serve.url("/"), serve.url("/"), serve.url("/status/500"),
                        "-c", "1", "-t", "1", *flags])
        assert r.returncode == 0, r.stderr
        out = run_hammer(["stats", "--csv", "-"], input_text=r.stdout)
        assert out.returncode == 0, out.stderr
        rows = list(csv.DictReader(io.StringIO(out.stdout)))
        counts = {row["key"]: (int(row["count"]), int(row["errors"])) for row in rows}
        assert counts == {serve.url("/"): (2, 0), serve.url("/status/500"): (0, 1)}, \
            (name, out.stdout, out.stderr)
        assert "malformed" not in out.stderr, (name, out.stderr)


def test_typed_records_and_the_seed_reducer(serve):
    """The typed form is opt-in because the seed's reducer tests failures by an empty second
    column: it reads typed lines without error, keys and successes intact, but counts a typed
    failure as a 0 s success. The plain form stays exact for it."""
    urls = [serve.url("/")] * 3 + [serve.url("/status/500")] * 2
    plain = run_hammer(["load", *urls, "-c", "1", "-t", "1"])
    typed = run_hammer(["load", *urls, "-c", "1", "-t", "1", "--failure-types"])
    assert typed.stdout.count("\t\thttp_5xx\n") == 2

    def ruby(records):
        lines = "".join(sorted(records.splitlines(keepends=True)))
        p = subprocess.run(["ruby", str(SEED_REDUCER), "--reducer"], input=lines,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        return {row[0]: row for row in (l.split("\t") for l in p.stdout.splitlines())}

    seed_plain = ruby(plain.stdout)
    seed_typed = ruby(typed.stdout)
    # key sum average max min errors count
    assert (seed_plain[serve.url("/status/500")][5], seed_plain[serve.url("/status/500")][6]) \
        == ("2", "0")
    assert seed_typed[serve.url("/")][6] == "3"  # successes still read right
    assert (seed_typed[serve.url("/status/500")][5], seed_typed[serve.url("/status/500")][6]) \
        == ("0", "2")  # the documented misreading
    r = run_hammer(["stats", "--json", "-"], input_text=typed.stdout)
    s = json.loads(r.stdout)
    assert s["failures"] == {"http_5xx": 2} and s["succeeded"] == 3
