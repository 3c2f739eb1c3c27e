"""`hammer bulk` through a cluster failure, exactly once: a node holding primaries hangs, or a
node stops, while batches are in flight; afterwards the index holds every input document once
(checked id by id against the input) or hammer dead-lettered it with a reason.

The cluster is its own, not the session's: three nodes in one harness JVM plus a fourth node,
node-4, in a second harness JVM that joined them (opensearch.py), so that node-4 can be
SIGSTOPped alone. Its fault detection is short (a follower that misses two 500 ms checks of 2 s
is removed; a cluster state publication waits 5 s at most), so a failover takes seconds, not the
default half minute; everything else is OpenSearch's own behaviour.

Half of the input documents carry an _id; the other half have none and get theirs from
`--id-from-position` (SOURCE:LINE, SOURCE = $HAMMER_INPUT_NAME here, the input being stdin), so
a re-sent batch overwrites instead of adding copies. Input arrives on stdin in two parts: the
second only once the fault is in place, so its batches are certainly sent into it.

Needs java 17 and mvn (see opensearch.py).
"""
import json
import os
import subprocess
import threading
import time

import pytest

import prerequisites
from harness import HAMMER
from opensearch import JAR, TOOL_DIR, OpenSearchCluster

FAST_FAULT_DETECTION = {
    "cluster.fault_detection.follower_check.interval": "500ms",
    "cluster.fault_detection.follower_check.timeout": "2s",
    "cluster.fault_detection.follower_check.retry_count": "2",
    "cluster.fault_detection.leader_check.interval": "500ms",
    "cluster.fault_detection.leader_check.timeout": "2s",
    "cluster.fault_detection.leader_check.retry_count": "2",
    "cluster.publish.timeout": "5s",
    "cluster.follower_lag.timeout": "5s",
}
INPUT_NAME = "failover-input"


@pytest.fixture(scope="module")
def clusters():
    """(the 3-node cluster, the JVM of node-4, a data-only node that joined it)."""
    prerequisites.require_built(TOOL_DIR, JAR, "opensearch")
    main = OpenSearchCluster(nodes=3, heap="1g", cluster_name="hammer-failover",
                             settings=FAST_FAULT_DETECTION)
    extra = None
    try:
        main.start(build_jar=False)
        extra = OpenSearchCluster(nodes=1, heap="512m", join=main,
                                  settings={**FAST_FAULT_DETECTION, "node.roles": "data,ingest"})
        extra.start(build_jar=False)
        # Shards stay where a test puts them: no rebalancing behind its back.
        ok(main, "PUT", "/_cluster/settings",
           {"persistent": {"cluster.routing.rebalance.enable": "none"}})
        yield main, extra
    finally:
        if extra is not None:
            extra.stop()
        main.stop()


def ok(cluster, method, path, body=None, node=None, expect=(200, 201)):
    status, data = cluster.request(method, path, body, node=node)
    assert status in expect, f"{method} {path}: {status} {data}"
    return data


def primaries(cluster, index):
    """{shard: node name} of the STARTED primaries of an index."""
    rows = ok(cluster, "GET", f"/_cat/shards/{index}?format=json&h=shard,prirep,state,node")
    return {int(r["shard"]): r["node"] for r in rows
            if r["prirep"] == "p" and r["state"] == "STARTED"}


def documents(n):
    """(input lines, the _id each document must end with). Even documents carry an _id; odd
    ones have none and get INPUT_NAME:LINE from --id-from-position (LINE: of the action)."""
    lines, ids = [], []
    for i in range(n):
        action_line = len(lines) + 1
        if i % 2 == 0:
            lines.append('{"index":{"_id":"with-id-%d"}}' % i)
            ids.append(f"with-id-{i}")
        else:
            lines.append('{"index":{}}')
            ids.append(f"{INPUT_NAME}:{action_line}")
        lines.append('{"n":%d,"text":"document number %d"}' % (i, i))
    return [line.encode() + b"\n" for line in lines], ids


def start_bulk(seed_url, index, tmp_path):
    env = dict(os.environ, HAMMER_INPUT_NAME=INPUT_NAME)
    out = open(tmp_path / "bulk.stdout", "w")
    err = open(tmp_path / "bulk.stderr", "w")
    proc = subprocess.Popen(
        [HAMMER, "bulk", "--cluster", seed_url, "--index", index, "--id-from-position",
         "--batch-docs", "500", "--timeout", "10s", "--max-retries", "20", "--retry-max", "2s",
         "--summary-json", str(tmp_path / "summary.json"),
         "--dead-letter", str(tmp_path / "dead.jsonl")],
        stdin=subprocess.PIPE, stdout=out, stderr=err, env=env)
    out.close()
    err.close()
    return proc


def indexed_documents(cluster, index):
    """{_id: _version} of every document in the index (a scroll over all of them)."""
    ok(cluster, "POST", f"/{index}/_refresh")
    found = {}
    page = ok(cluster, "POST", f"/{index}/_search?scroll=1m",
              {"size": 5000, "sort": ["_doc"], "_source": False, "version": True})
    while page["hits"]["hits"]:
        for hit in page["hits"]["hits"]:
            assert hit["_id"] not in found, f"{hit['_id']} found twice"
            found[hit["_id"]] = hit["_version"]
        page = ok(cluster, "POST", "/_search/scroll",
                  {"scroll": "1m", "scroll_id": page["_scroll_id"]})
    ok(cluster, "DELETE", "/_search/scroll", {"scroll_id": page["_scroll_id"]})
    return found


def check_exactly_once(cluster, index, expected_ids, tmp_path, proc):
    """The run completed, and every input document is in the index exactly once or
    dead-lettered with a reason; returns (summary, {_id: _version})."""
    stderr = (tmp_path / "bulk.stderr").read_text()
    assert proc.returncode == 0, stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    dead_path = tmp_path / "dead.jsonl"
    letters = [json.loads(l) for l in dead_path.read_text().splitlines()] \
        if dead_path.exists() else []
    for letter in letters:
        # Given up after the retries (the reason names the last failure), never rejected.
        assert letter["error_type"] == "retries_exhausted" and letter["reason"], letter
    dead_ids = {l["action"]["index"]["_id"] for l in letters}
    found = indexed_documents(cluster, index)
    count = ok(cluster, "GET", f"/{index}/_count")["count"]
    assert count == len(found)
    assert len(set(expected_ids)) == len(expected_ids)
    assert summary["documents_read"] == len(expected_ids), summary
    assert summary["indexed"] + summary["dead_lettered"] == len(expected_ids), summary
    assert summary["dead_lettered"] == len(letters)
    # No loss, no copies: the index holds exactly the input's ids, less what was dead-lettered.
    assert set(found) | dead_ids == set(expected_ids)
    assert set(found) - set(expected_ids) == set()
    # A dead-lettered document may still be in the index: its last request timed out on the
    # client's side after the cluster had applied it.
    print(f"dead-lettered: {len(dead_ids)}, of which in the index all the same: "
          f"{len(dead_ids & set(found))}")
    return summary, found


def report(what, summary, found, seconds):
    rewritten = sum(1 for version in found.values() if version > 1)
    figures = {k: summary[k] for k in ("documents_read", "indexed", "dead_lettered",
                                       "items_retried", "requests", "requests_failed",
                                       "discoveries", "placement_changes")}
    print(f"{what}: {figures}; documents written more than once (version > 1), still one "
          f"copy each: {rewritten}; bulk ran {seconds:.1f} s")


def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def indexing_total(cluster, index):
    stats = ok(cluster, "GET", f"/{index}/_stats/indexing")
    return stats["_all"]["primaries"]["indexing"]["index_total"]


def test_node_holding_primaries_hangs_mid_bulk(clusters, tmp_path):
    """node-4 holds every primary of the index and its JVM is SIGSTOPped while `hammer bulk`
    writes: all of node-4's threads stop (HTTP, transport, indexing), its sockets stay open, so
    requests to it are accepted by the kernel and never answered. hammer's requests to it time
    out (--timeout 10s); the cluster manager removes node-4 after its missed follower checks and
    promotes the replicas on the other nodes; hammer re-reads the placement and re-sends. Only
    after hammer has finished is node-4 resumed (SIGCONT)."""
    main, extra = clusters
    index = "failover-hang"
    main.request("DELETE", f"/{index}")
    # Every primary on node-4 (the only node allowed), then one replica each elsewhere.
    ok(main, "PUT", f"/{index}", {"settings": {
        "number_of_shards": 4, "number_of_replicas": 0,
        "index.routing.allocation.require._name": "node-4"}})
    ok(main, "GET", f"/_cluster/health/{index}?wait_for_status=green&timeout=60s")
    ok(main, "PUT", f"/{index}/_settings", {
        "index.routing.allocation.require._name": None, "number_of_replicas": 1})
    ok(main, "GET", f"/_cluster/health/{index}?wait_for_status=green&timeout=60s")
    assert set(primaries(main, index).values()) == {"node-4"}

    lines, ids = documents(10_000)
    half = len(lines) // 2
    began = time.monotonic()
    proc = start_bulk(main.url("node-1"), index, tmp_path)
    paused = False
    try:
        proc.stdin.write(b"".join(lines[:half]))
        proc.stdin.flush()
        wait_until(lambda: indexing_total(main, index) >= 1_000, 60, "the first part")
        assert proc.poll() is None, "hammer bulk ended before its input did"
        extra.pause()
        paused = True
        proc.stdin.write(b"".join(lines[half:]))
        proc.stdin.close()
        proc.wait(timeout=150)
        seconds = time.monotonic() - began
        # The cluster failed over: the replicas on the other nodes are the primaries now.
        assert "node-4" not in primaries(main, index).values()
        summary, found = check_exactly_once(main, index, ids, tmp_path, proc)
        report("node-4 hung (SIGSTOP)", summary, found, seconds)
        assert summary["requests_failed"] + summary["items_retried"] > 0, summary
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if paused:
            extra.resume()
        ok(main, "GET", "/_cluster/health?wait_for_nodes=4&timeout=120s")
        main.request("DELETE", f"/{index}")


def test_node_stopped_while_batches_are_in_flight(clusters, tmp_path):
    """A node holding primaries is stopped (the harness's `stop`: node.close(), its HTTP and
    transport ports close, connections in flight are reset) while hammer is sending the second
    part of its input; OpenSearch promotes the replicas of its primaries on the other nodes."""
    main, _ = clusters
    index = "failover-stop"
    main.request("DELETE", f"/{index}")
    ok(main, "PUT", f"/{index}", {"settings": {"number_of_shards": 6, "number_of_replicas": 1}})
    ok(main, "GET", f"/_cluster/health/{index}?wait_for_status=green&timeout=60s")
    manager = ok(main, "GET", "/_cat/cluster_manager?format=json")[0]["node"]
    placement = primaries(main, index)
    # A node of the first JVM (the harness can stop those), holding a primary, and not the
    # cluster manager (an election would only add time).
    victim = next(name for name in ("node-1", "node-2", "node-3")
                  if name != manager and name in placement.values())
    lines, ids = documents(16_000)
    half = len(lines) // 2
    began = time.monotonic()
    proc = start_bulk(main.url(manager), index, tmp_path)
    writer = None
    try:
        proc.stdin.write(b"".join(lines[:half]))
        proc.stdin.flush()
        wait_until(lambda: indexing_total(main, index) >= 2_000, 60, "the first part")
        assert proc.poll() is None, "hammer bulk ended before its input did"

        def second_part():
            proc.stdin.write(b"".join(lines[half:]))
            proc.stdin.close()

        writer = threading.Thread(target=second_part)
        writer.start()
        main.stop_node(victim)
        writer.join(timeout=150)
        proc.wait(timeout=150)
        seconds = time.monotonic() - began
        assert victim not in primaries(main, index).values()
        summary, found = check_exactly_once(main, index, ids, tmp_path, proc)
        report(f"{victim} stopped", summary, found, seconds)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if writer is not None:
            writer.join(timeout=10)
        if not main.nodes[victim].running:
            main.start_node(victim)
        main.request("DELETE", f"/{index}")
