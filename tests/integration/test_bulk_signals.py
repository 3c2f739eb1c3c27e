"""SIGINT and SIGTERM to `hammer bulk` writing into the real 3-node OpenSearch cluster.

The run stops early: requests in flight finish, everything read but not yet indexed is
dead-lettered as interrupted, and the exit status (1) and the summary say it was stopped. Every
document is accounted for against the cluster's own count: the input is read in order, so the
first `documents_read` documents are either in the index or in the dead letters (never both),
and none after them is in the index.
"""
import json
import signal
import subprocess
import time

import pytest

from bulk_support import synthetic_corpus
from harness import HAMMER
from opensearch import opensearch_cluster  # noqa: F401  (session fixture)

INDEX = "bulk-signal"


def ok(cluster, method, path, body=None):
    status, data = cluster.request(method, path, body)
    assert status in (200, 201), f"{method} {path}: {status} {data}"
    return data


def count(cluster, query):
    return ok(cluster, "POST", f"/{INDEX}/_count", {"query": query})["count"]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_stops_bulk_with_every_document_accounted_for(opensearch_cluster, tmp_path,
                                                             signum):
    c = opensearch_cluster
    n = 200_000
    corpus = tmp_path / "corpus.ndjson"
    synthetic_corpus(corpus, n, seed=11)  # document i has _id doc-i and "n": i, in order
    c.request("DELETE", f"/{INDEX}")
    ok(c, "PUT", f"/{INDEX}", {"settings": {"number_of_shards": 6, "number_of_replicas": 0,
                                            "refresh_interval": "200ms"}})
    ok(c, "GET", f"/_cluster/health/{INDEX}?wait_for_status=green&timeout=60s")
    summary_path, dead = tmp_path / "summary.json", tmp_path / "dead.jsonl"
    with open(tmp_path / "bulk.stderr", "w") as err:
        proc = subprocess.Popen(
            [HAMMER, "bulk", "--cluster", ",".join(node.url for node in c.nodes.values()),
             "--index", INDEX, "--summary-json", str(summary_path), "--dead-letter", str(dead),
             str(corpus)], stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 120
        while count(c, {"match_all": {}}) < 20_000:
            assert proc.poll() is None, "hammer bulk ended before it was signalled"
            assert time.monotonic() < deadline, "nothing indexed in time"
            time.sleep(0.1)
        proc.send_signal(signum)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = (tmp_path / "bulk.stderr").read_text()
    assert proc.returncode == 1, stderr  # stopped early: not a complete run
    assert "hammer bulk: stopping; waiting for requests in flight" in stderr
    s = json.loads(summary_path.read_text())
    read = s["documents_read"]
    assert s["stopped_by_signal"] and s["balanced"], s
    assert 20_000 <= read < n, s
    assert s["interrupted"] > 0 and s["dead_lettered"] == s["interrupted"], s

    letters = [json.loads(line) for line in dead.read_text().splitlines()]
    assert len(letters) == s["interrupted"]
    assert all(l["error_type"] == "interrupted" and l["status"] == 0 and
               l["reason"].startswith("the run was stopped before this document was")
               for l in letters), letters[:3]
    dead_numbers = sorted(l["source"]["n"] for l in letters)
    assert len(set(dead_numbers)) == len(dead_numbers) and dead_numbers[-1] < read
    assert all(l["action"]["index"]["_id"] == f"doc-{l['source']['n']}" for l in letters)

    # The cluster's side: what hammer says it indexed is there, nothing read after it, and no
    # dead-lettered document.
    ok(c, "POST", f"/{INDEX}/_refresh")
    assert count(c, {"match_all": {}}) == s["indexed"]
    assert count(c, {"range": {"n": {"gte": read}}}) == 0
    for start in range(0, len(dead_numbers), 10_000):
        chunk = dead_numbers[start:start + 10_000]
        assert count(c, {"terms": {"n": chunk}}) == 0
    assert s["indexed"] + len(dead_numbers) == read
    c.request("DELETE", f"/{INDEX}")
