"""`hammer bulk` against a real OpenSearch 2.19 that keeps answering 429 until the retries run
out.

The persistent 429 is the cluster's own: an index with the read-only-allow-delete block, which
OpenSearch puts on an index when a node's disk passes the flood-stage watermark, rejects every
write with 429 TOO_MANY_REQUESTS (cluster_block_exception) for as long as the block stays. (A
write thread pool with a queue of 1 rejects only while it is busy, so hammer's own retries would
get through it; the block refuses every attempt.) The request times come from the cluster too:
its HTTP tracer (`http.tracer.include`, logger org.opensearch.http.HttpTracer at TRACE, both
dynamic settings) logs when each _bulk request arrived.
"""
import datetime
import json
import re
import subprocess

from harness import HAMMER
from opensearch import opensearch_cluster  # noqa: F401  (session fixture)

INDEX = "bulk-429"
TRACED = re.compile(r"^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d,\d{3})\]\[TRACE\].*\[POST\]\[/" + INDEX +
                    r"/_bulk[^\]]*\] received request")


def ok(cluster, method, path, body=None):
    status, data = cluster.request(method, path, body)
    assert status in (200, 201), f"{method} {path}: {status} {data}"
    return data


def bulk_arrivals(log_text):
    """Arrival times (seconds) of the _bulk requests to INDEX in the cluster's log."""
    times = []
    for line in log_text.splitlines():
        m = TRACED.match(line)
        if m:
            when = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S,%f")
            times.append(when.timestamp())
    return times


def test_persistent_429_exhausts_the_retries_with_backoff(opensearch_cluster, tmp_path):
    c = opensearch_cluster
    c.request("DELETE", f"/{INDEX}")
    ok(c, "PUT", f"/{INDEX}", {"settings": {"number_of_shards": 1, "number_of_replicas": 0}})
    ok(c, "GET", f"/_cluster/health/{INDEX}?wait_for_status=green&timeout=60s")
    ok(c, "PUT", f"/{INDEX}/_settings", {"index.blocks.read_only_allow_delete": True})
    ok(c, "PUT", "/_cluster/settings", {"transient": {
        "http.tracer.include": f"/{INDEX}/_bulk*", "logger.org.opensearch.http.HttpTracer": "TRACE"}})
    log = c.data_dir / "logs" / f"{c.cluster_name}.log"
    log_start = log.stat().st_size
    try:
        documents = 20
        retries = 4
        initial = 0.1  # --retry-initial: the nominal delay before retry n is initial * 2^(n-1)
        text = "".join('{"index":{"_id":"busy-%d"}}\n{"n":%d}\n' % (i, i)
                       for i in range(documents))
        summary_path, dead = tmp_path / "summary.json", tmp_path / "dead.jsonl"
        proc = subprocess.run(
            [HAMMER, "bulk", "--cluster", c.any_url(), "--index", INDEX, "--max-retries",
             str(retries), "--retry-initial", f"{int(initial * 1000)}ms", "--retry-max", "10s",
             "--summary-json", str(summary_path), "--dead-letter", str(dead)],
            input=text, capture_output=True, text=True, timeout=120)
        # Exit 0: the run completed and every document is accounted for (dead-lettered).
        assert proc.returncode == 0, proc.stderr
        s = json.loads(summary_path.read_text())
        assert (s["documents_read"], s["indexed"], s["retries_exhausted"],
                s["dead_lettered"]) == (documents, 0, documents, documents), s
        assert s["balanced"] and s["items_retried"] == documents * retries, s
        assert s["requests"] == 1 + retries, s

        # Every document dead-lettered, as read, with the server's 429 and its reason.
        letters = [json.loads(line) for line in dead.read_text().splitlines()]
        assert sorted(l["action"]["index"]["_id"] for l in letters) == \
            sorted(f"busy-{i}" for i in range(documents))
        for letter in letters:
            assert (letter["status"], letter["error_type"]) == (429, "retries_exhausted"), letter
            assert letter["reason"].startswith(f"retries exhausted after {retries} retries; last: "
                                               "cluster_block_exception: "), letter
            assert "read-only-allow-delete block" in letter["reason"], letter
            assert letter["source"] == {"n": int(letter["action"]["index"]["_id"][5:])}

        # The cluster saw 1 + retries requests, each retry at least half its nominal backoff
        # after the one before (equal jitter: the delay is in [nominal/2, nominal]); the log's
        # clock has millisecond resolution.
        arrivals = bulk_arrivals(log.read_bytes()[log_start:].decode(errors="replace"))
        assert len(arrivals) == 1 + retries, arrivals
        gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
        print(f"bulk requests at the cluster, gaps between them (s): {gaps}")
        for n, gap in enumerate(gaps, start=1):
            nominal = initial * 2 ** (n - 1)
            assert gap >= nominal / 2 - 0.002, (n, gaps)
        # The delays grow: the last gap is longer than the first by the doubling's share.
        assert gaps[-1] > gaps[0], gaps
        ok(c, "POST", f"/{INDEX}/_refresh")
        assert ok(c, "GET", f"/{INDEX}/_count")["count"] == 0
    finally:
        c.request("PUT", "/_cluster/settings", {"transient": {
            "http.tracer.include": None, "logger.org.opensearch.http.HttpTracer": None}})
        c.request("PUT", f"/{INDEX}/_settings", {"index.blocks.read_only_allow_delete": None})
        c.request("DELETE", f"/{INDEX}")
