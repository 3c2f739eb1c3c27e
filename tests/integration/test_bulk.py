"""`hammer route` and `hammer bulk` against the real 3-node OpenSearch 2.19 cluster.

(a) hammer's shard for 10 000 random ids and routing values (non-ASCII, emoji, JSON escapes)
    equals the cluster's: where each indexed document actually lives (per-shard searches), and
    `_search_shards?routing=` for a few hundred, on 1, 3, 5 and 6 primaries and a partitioned
    index; offline routing (`--shards N`) agrees; alias index_routing is applied.
(b) 200 000 documents into 6 shards / 1 replica: all indexed, and the cluster's own
    indexing-pressure counters show >= 99% of primary shard work executed on the node that
    received the bulk (round-robin on the same data: about 2/3 forwarded).
(c) a node stopped mid-run: the run completes, read = indexed + dead-lettered, no duplicates.
(d) bad input: invalid JSON, a missing id field, an unknown index, mapping conflicts: each
    counted, dead-lettered with its reason, and the run goes on.
Needs java 17 and mvn (see opensearch.py).
"""
import json
import subprocess
import time
from collections import Counter
from urllib.parse import quote

import jsonschema
import pytest

from bulk_support import (bulk_lines, counter_delta, locality, node_counters, routing_docs,
                          synthetic_corpus)
from harness import HAMMER, ROOT
from opensearch import opensearch_cluster  # noqa: F401  (session fixture)

SUMMARY_SCHEMA = json.loads((ROOT / "docs" / "summary.schema.json").read_text())


def ok(cluster, method, path, body=None, expect=(200, 201), node=None):
    status, data = cluster.request(method, path, body, node=node)
    assert status in expect, f"{method} {path}: {status} {data}"
    return data


def hammer(args, input_text=None, timeout=300):
    proc = subprocess.run([HAMMER, *args], input=input_text, capture_output=True, text=True,
                          timeout=timeout)
    return proc


def create_index(cluster, name, shards, replicas=0, partition_size=None, mappings=None,
                 extra=None):
    cluster.request("DELETE", f"/{name}")
    settings = {"number_of_shards": shards, "number_of_replicas": replicas}
    if partition_size:
        settings["routing_partition_size"] = partition_size
    settings.update(extra or {})
    body = {"settings": settings}
    if mappings:
        body["mappings"] = mappings
    ok(cluster, "PUT", f"/{name}", body)
    ok(cluster, "GET", f"/_cluster/health/{name}?wait_for_status=green&timeout=60s")


def bulk(cluster, index, args, input_text=None, path=None, tmp_path=None):
    """Runs hammer bulk; returns (summary dict, stderr)."""
    summary = tmp_path / f"summary-{index}-{time.monotonic_ns()}.json"
    cmd = ["bulk", "--cluster", ",".join(n.url for n in cluster.nodes.values() if n.running),
           "--index", index, "--summary-json", str(summary), *args]
    if path:
        cmd.append(str(path))
    proc = hammer(cmd, input_text)
    assert proc.returncode == 0, proc.stderr
    document = json.loads(summary.read_text())
    # The summary schema every hammer command shares (docs/summary.schema.json).
    jsonschema.validate(document, SUMMARY_SCHEMA)
    assert document["requests"] == document["succeeded"] + document["failed"]
    # The latency of the POST _bulk requests answered (not 429/5xx), in microseconds.
    latency = document["latency"]
    if document["succeeded"] > 0:
        assert latency is not None, document
        assert 0 < latency["min_us"] <= latency["p50_us"] <= latency["p99_us"] <= latency["max_us"]
        assert latency["max_us"] < document["seconds"] * 1e6 + 1e6, (latency, document["seconds"])
    else:
        assert latency is None, document
    return document, proc.stderr


def route_keys(cluster, index, text, *extra):
    proc = hammer(["route", "--cluster", cluster.url(0), "--index", index, *extra], text)
    assert proc.returncode == 0, proc.stderr
    return [int(line.split("\t", 1)[0]) for line in proc.stdout.splitlines()]


def shard_of_each_document(cluster, index, shards):
    """{_id: shard} from one search per shard (preference=_shards:N)."""
    where = {}
    for shard in range(shards):
        hits = ok(cluster, "POST", f"/{index}/_search?preference=_shards:{shard}",
                  {"size": 10000, "_source": False, "query": {"match_all": {}}})["hits"]["hits"]
        for hit in hits:
            assert hit["_id"] not in where
            where[hit["_id"]] = shard
    return where


# ---- (a) routing equals the cluster's ------------------------------------------------------

ROUTING_CASES = [  # (index, shards, routing_partition_size)
    ("route-1", 1, None), ("route-3", 3, None), ("route-5", 5, None), ("route-6", 6, None),
    ("route-6p2", 6, 2),
]


@pytest.mark.parametrize("index,shards,partition_size", ROUTING_CASES)
def test_route_matches_the_cluster(opensearch_cluster, tmp_path, index, shards, partition_size):
    c = opensearch_cluster
    mappings = {"_routing": {"required": True}} if partition_size else None
    create_index(c, index, shards, partition_size=partition_size, mappings=mappings,
                 extra={"refresh_interval": "-1"})
    docs = routing_docs(10000, seed=shards * 10 + (partition_size or 0),
                        with_routing="all" if partition_size else "half")
    text = bulk_lines(docs, seed=shards)
    keys = route_keys(c, index, text)
    assert len(keys) == len(docs) and min(keys) >= 0 and max(keys) < shards

    # Offline, from the same numbers the cluster holds, the keys are the same.
    offline = ["--shards", str(shards), "--distribution", "opensearch"]
    if partition_size:
        offline += ["--partition-size", str(partition_size)]
    off = hammer(["route", *offline], text)
    assert off.returncode == 0, off.stderr
    assert [int(l.split("\t", 1)[0]) for l in off.stdout.splitlines()] == keys

    summary, _ = bulk(c, index, ["--batch-docs", "2000"], text, tmp_path=tmp_path)
    assert summary["indexed"] == len(docs) and summary["dead_lettered"] == 0
    assert summary["requests_off_primary"] == 0
    ok(c, "POST", f"/{index}/_refresh")
    where = shard_of_each_document(c, index, shards)
    assert len(where) == len(docs)
    wrong = [(d, keys[i], where[d[0]]) for i, d in enumerate(docs) if where[d[0]] != keys[i]]
    assert not wrong, f"{len(wrong)} documents on another shard, e.g. {wrong[:3]}"

    # The server's own answer for routing values, without indexing anything.
    checked = 0
    for i, (doc_id, routing) in enumerate(docs):
        if routing is None or "," in routing or checked >= 200:
            continue
        groups = ok(c, "GET", f"/{index}/_search_shards?routing={quote(routing, safe='')}")["shards"]
        candidates = {copy["shard"] for group in groups for copy in group}
        assert keys[i] in candidates, (routing, keys[i], candidates)
        if not partition_size:
            assert candidates == {keys[i]}
        checked += 1
    assert checked == 200
    c.request("DELETE", f"/{index}")


def test_route_key_layout_and_alias_routing(opensearch_cluster, tmp_path):
    c = opensearch_cluster
    create_index(c, "route-alias", 6)
    ok(c, "POST", "/_aliases", {"actions": [{"add": {"index": "route-alias", "alias": "ra",
                                                     "index_routing": "hello"}}]})
    text = "".join('{"id":"d%d","v":%d}\n' % (i, i) for i in range(3000))
    # Through the alias every document goes to hash("hello")'s shard: 5 of 6.
    assert set(route_keys(c, "ra", text, "--id-field", "id")) == {5}
    # K partitions per shard: key = shard*K + slot, every slot used, payload = the line.
    proc = hammer(["route", "--cluster", c.url(0), "--index", "route-alias", "--id-field", "id",
                   "-k", "4"], text)
    assert proc.returncode == 0, proc.stderr
    plain = route_keys(c, "route-alias", text, "--id-field", "id")
    lines = proc.stdout.splitlines()
    assert [l.split("\t", 1)[1] + "\n" for l in lines] == text.splitlines(keepends=True)
    keys = [int(l.split("\t", 1)[0]) for l in lines]
    assert [k // 4 for k in keys] == plain
    assert set(keys) == set(range(24))
    described = json.loads(hammer(["route", "--cluster", c.url(0), "--index", "ra", "-k", "4",
                                   "--describe"]).stdout)
    assert described["partitions"] == 24 and described["routing_num_shards"] == 768
    assert len(described["primaries"]) == 6
    # route → sort (a Hadoop shuffle) → bulk --from-route indexes exactly the input.
    routed = sorted(proc.stdout.splitlines(keepends=True))
    summary, _ = bulk(c, "ra", ["--from-route", "--id-field", "id"], "".join(routed),
                      tmp_path=tmp_path)
    assert summary["indexed"] == 3000 and summary["requests_off_primary"] == 0
    ok(c, "POST", "/route-alias/_refresh")
    assert ok(c, "GET", "/route-alias/_count?routing=hello")["count"] == 3000
    assert ok(c, "GET", "/route-alias/_count?preference=_shards:5")["count"] == 3000
    c.request("DELETE", "/route-alias")


# ---- (b) 200 000 documents, shard-aware -------------------------------------------------------

def test_bulk_200k_documents_are_executed_where_they_arrive(opensearch_cluster, tmp_path):
    c = opensearch_cluster
    corpus = tmp_path / "corpus.ndjson"
    n = 200_000
    synthetic_corpus(corpus, n)
    create_index(c, "bulk-200k", 6, replicas=1, extra={"refresh_interval": "30s"})
    before = node_counters(c.any_url())
    summary, stderr = bulk(c, "bulk-200k", [], path=corpus, tmp_path=tmp_path)
    after = node_counters(c.any_url())
    assert summary["documents_read"] == n and summary["indexed"] == n, stderr
    assert summary["balanced"] and summary["dead_lettered"] == 0
    ok(c, "POST", "/bulk-200k/_refresh")
    assert ok(c, "GET", "/bulk-200k/_count")["count"] == n

    delta = counter_delta(before, after)
    forwarded, primary, local = locality(delta)
    print(f"shard-aware: primary {primary} B, forwarded {forwarded} B, local {local:.4f}, "
          f"transport tx {delta['total']['tx_bytes']} B, replica {delta['total']['replica']} B")
    assert primary > 0
    assert local >= 0.99, delta
    # hammer's own account agrees: no shard request needed another hop.
    assert summary["shard_requests_remote"] <= 0.01 * summary["shard_requests"]
    # Every node coordinated a share (the primaries are spread), none forwarded.
    for name in c.nodes:
        assert delta[name]["coordinating"] > 0
        assert delta[name]["combined"] - delta[name]["coordinating"] <= 0.01 * delta[name]["primary"]

    # The same data sent round-robin (a client that does not route): ~2/3 forwarded.
    create_index(c, "bulk-200k-rr", 6, replicas=1, extra={"refresh_interval": "30s"})
    head = tmp_path / "head.ndjson"
    with open(corpus) as src, open(head, "w") as dst:
        for i, line in enumerate(src):
            if i >= 2 * 40_000:
                break
            dst.write(line)
    before = node_counters(c.any_url())
    rr, _ = bulk(c, "bulk-200k-rr", ["--routing", "round-robin"], path=head, tmp_path=tmp_path)
    rr_delta = counter_delta(before, node_counters(c.any_url()))
    _, _, rr_local = locality(rr_delta)
    sa_tx_per_doc = delta["total"]["tx_bytes"] / n
    rr_tx_per_doc = rr_delta["total"]["tx_bytes"] / 40_000
    print(f"round-robin: local {rr_local:.4f}; transport bytes per document: shard-aware "
          f"{sa_tx_per_doc:.0f}, round-robin {rr_tx_per_doc:.0f}")
    assert rr["indexed"] == 40_000
    assert 0.2 < rr_local < 0.5
    # Between nodes, shard-aware moves the replica copies only; round-robin also forwards.
    assert sa_tx_per_doc < 0.8 * rr_tx_per_doc
    c.request("DELETE", "/bulk-200k")
    c.request("DELETE", "/bulk-200k-rr")


# ---- (d) bad input ----------------------------------------------------------------------------

def dead_letters(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_bad_input_is_counted_and_dead_lettered(opensearch_cluster, tmp_path):
    c = opensearch_cluster
    create_index(c, "bulk-bad", 3, mappings={"properties": {"n": {"type": "long"}}})
    ok(c, "PUT", "/_cluster/settings", {"persistent": {"action.auto_create_index": "false"}})
    try:
        lines = []
        for i in range(500):
            lines.append('{"index":{"_id":"p%d"}}' % i)
            if i % 100 == 7:
                lines.append('{"n":"not a number %d"}' % i)           # mapping conflict
            else:
                lines.append('{"n":%d}' % i)
        lines[40:40] = ['{"index":{"_id":"broken"}', '{"n":1}']       # invalid action JSON
        lines[60:60] = ['{"index":{"_id":"src"}}', '{"n":']            # invalid source JSON
        lines += ['{"index":{"_index":"no-such-index","_id":"u1"}}', '{"n":1}']  # unknown index
        dead = tmp_path / "dead-pairs.jsonl"
        summary, _ = bulk(c, "bulk-bad", ["--dead-letter", str(dead)], "\n".join(lines) + "\n",
                          tmp_path=tmp_path)
        assert summary["documents_read"] == 503
        assert summary["indexed"] == 495
        assert summary["invalid_input"] == 2
        assert summary["rejected_by_server"] == 6   # 5 mapping conflicts + 1 unknown index
        assert summary["unroutable"] == 1 and summary["unroutable_reasons"] == {"other_index": 1}
        assert summary["balanced"]
        letters = dead_letters(dead)
        assert len(letters) == 8
        kinds = Counter(l["error_type"] for l in letters)
        assert kinds == {"mapper_parsing_exception": 5, "invalid_input": 2,
                         "index_not_found_exception": 1}
        conflict = next(l for l in letters if l["error_type"] == "mapper_parsing_exception")
        assert conflict["status"] == 400 and "failed to parse field [n]" in conflict["reason"]
        assert conflict["action"]["index"]["_id"].startswith("p")
        assert conflict["source"]["n"].startswith("not a number")
        missing = next(l for l in letters if l["error_type"] == "index_not_found_exception")
        assert missing["status"] == 404 and missing["action"]["index"]["_index"] == "no-such-index"
        invalid = [l for l in letters if l["error_type"] == "invalid_input"]
        assert {l["line"] for l in invalid} == {41, 61}
        assert all(l["status"] == 0 and "invalid JSON" in l["reason"] for l in invalid)

        # One document per line: a missing id field and invalid lines are dead-lettered too.
        docs = ['{"id":"d%d","n":%d}' % (i, i) for i in range(300)]
        docs[10] = '{"n":10}'
        docs[20] = '{"id":"d20","n":"x"}'
        docs[30] = 'not json at all'
        dead = tmp_path / "dead-docs.jsonl"
        summary, _ = bulk(c, "bulk-bad", ["--id-field", "id", "--dead-letter", str(dead)],
                          "\n".join(docs) + "\n", tmp_path=tmp_path)
        assert (summary["documents_read"], summary["indexed"], summary["dead_lettered"]) == (300, 297, 3)
        letters = dead_letters(dead)
        reasons = sorted(l["reason"].split(":")[0] for l in letters)
        assert reasons == ["invalid JSON", "mapper_parsing_exception", "missing id field \"id\""]
        ok(c, "POST", "/bulk-bad/_refresh")
        assert ok(c, "GET", "/bulk-bad/_count")["count"] == 495 + 297
    finally:
        ok(c, "PUT", "/_cluster/settings", {"persistent": {"action.auto_create_index": None}})
        c.request("DELETE", "/bulk-bad")


def test_unknown_target_index_is_a_clear_error(opensearch_cluster):
    proc = hammer(["bulk", "--cluster", opensearch_cluster.url(0), "--index", "does-not-exist"],
                  '{"index":{}}\n{}\n')
    assert proc.returncode == 1
    assert proc.stderr.strip() == "hammer bulk: index does-not-exist not found"


# ---- (c) a node stops mid-run -----------------------------------------------------------------

def primaries(cluster, index, node=None):
    """{shard: node name} of the STARTED primaries of an index (the cluster's own placement)."""
    rows = ok(cluster, "GET", f"/_cat/shards/{index}?format=json&h=shard,prirep,state,node",
              node=node)
    return {int(r["shard"]): r["node"] for r in rows if r["prirep"] == "p" and
            r["state"] == "STARTED"}


def test_node_stopped_mid_run(opensearch_cluster, tmp_path):
    """A node stops while `hammer bulk` runs. The input arrives on stdin in two parts: the
    second only once the cluster has promoted replicas of the lost node's primaries, so the
    run's last requests are certainly sent after the failure. The run completes, read = indexed
    + dead-lettered, no document twice; and the placement read after the loss is the one in use:
    under it the lost node got no request, and the nodes now holding the lost node's primaries
    did."""
    c = opensearch_cluster
    first, second = 40_000, 60_000
    n = first + second
    corpus = tmp_path / "corpus.ndjson"
    synthetic_corpus(corpus, n, seed=3)
    lines = corpus.read_bytes().splitlines(keepends=True)  # an action and a source per document
    create_index(c, "bulk-fault", 6, replicas=1)
    summary_path = tmp_path / "fault.json"
    dead = tmp_path / "fault-dead.jsonl"
    manager = ok(c, "GET", "/_cat/cluster_manager?format=json")[0]["node"]
    # Not the cluster manager: its election would only add time.
    victim = next(name for name in c.nodes if name != manager)
    with open(tmp_path / "bulk.stdout", "w") as out, open(tmp_path / "bulk.stderr", "w") as err:
        proc = subprocess.Popen(
            [HAMMER, "bulk", "--cluster", ",".join(c.url(i) for i in range(3)), "--index",
             "bulk-fault", "--max-retries", "15", "--summary-json", str(summary_path),
             "--dead-letter", str(dead)],
            stdin=subprocess.PIPE, stdout=out, stderr=err)
    try:
        proc.stdin.write(b"".join(lines[:2 * first]))
        proc.stdin.flush()
        # Stop the node once writing is under way.
        deadline = time.monotonic() + 120
        while ok(c, "GET", "/bulk-fault/_count", node=manager)["count"] < 15_000:
            assert time.monotonic() < deadline, "phase one was not indexed in time"
            time.sleep(0.2)
        lost = {shard for shard, node in primaries(c, "bulk-fault", manager).items()
                if node == victim}
        assert lost, "the victim held no primary"
        c.stop_node(victim)
        # The cluster promotes replicas of the victim's primaries; then the second part.
        deadline = time.monotonic() + 120
        while True:
            placement = primaries(c, "bulk-fault", manager)
            if len(placement) == 6 and victim not in placement.values():
                break
            assert time.monotonic() < deadline, placement
            time.sleep(0.2)
        assert proc.poll() is None, "hammer bulk ended before its input did"
        proc.stdin.write(b"".join(lines[2 * first:]))
        proc.stdin.close()
        proc.wait(timeout=300)
        stderr = (tmp_path / "bulk.stderr").read_text()
        assert proc.returncode == 0, stderr
        summary = json.loads(summary_path.read_text())
        print({k: summary[k] for k in ("indexed", "dead_lettered", "items_retried",
                                       "requests_failed", "discoveries", "placement_changes",
                                       "requests_off_primary")})
        assert summary["documents_read"] == n
        assert summary["indexed"] + summary["dead_lettered"] == n
        assert summary["items_retried"] + summary["requests_failed"] > 0
        # The placement read after the loss was in use: the lost node got nothing under it, and
        # every node holding one of its former primaries (the cluster's own answer) got
        # requests.
        assert summary["placement_changes"] >= 1, summary
        by_name = {node["name"]: node for node in summary["nodes"]}
        assert by_name[victim]["requests"] > 0
        assert by_name[victim]["requests_since_placement_change"] == 0, summary["nodes"]
        for node in {placement[shard] for shard in lost}:
            assert by_name[node]["requests_since_placement_change"] > 0, (node, summary["nodes"])
        ok(c, "POST", "/bulk-fault/_refresh", node=manager)
        count = ok(c, "GET", "/bulk-fault/_count", node=manager)["count"]
        dead_ids = {l["action"]["index"]["_id"] for l in dead_letters(dead)} if dead.exists() else set()
        # Ids make retries idempotent: exactly one document per distinct id, none twice.
        assert summary["dead_lettered"] == len(dead_ids)
        assert n - len(dead_ids) <= count <= n
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if not c.nodes[victim].running:
            c.start_node(victim)
        ok(c, "GET", "/_cluster/health?wait_for_nodes=3&timeout=120s")
        c.request("DELETE", "/bulk-fault")


def test_gzip_bodies_and_document_input(opensearch_cluster, tmp_path):
    """--gzip: the real cluster inflates the bodies; fewer bytes are sent than read."""
    c = opensearch_cluster
    create_index(c, "bulk-gzip", 3)
    docs = "".join('{"id":"g%d","msg":"%s"}\n' % (i, "lorem ipsum dolor " * 8) for i in range(5000))
    summary, _ = bulk(c, "bulk-gzip", ["--id-field", "id", "--gzip", "--op", "create"], docs,
                      tmp_path=tmp_path)
    assert summary["indexed"] == 5000 and summary["balanced"]
    assert summary["requests_off_primary"] == 0
    assert summary["body_bytes_sent"] * 4 < summary["body_bytes_uncompressed"]
    ok(c, "POST", "/bulk-gzip/_refresh")
    assert ok(c, "GET", "/bulk-gzip/_count")["count"] == 5000
    assert ok(c, "GET", "/bulk-gzip/_doc/g42")["_source"]["id"] == "g42"
    c.request("DELETE", "/bulk-gzip")


def test_id_from_position_makes_a_rerun_overwrite(opensearch_cluster, tmp_path):
    """The same input bulk-loaded twice, as a retried or re-run task would: with
    --id-from-position the documents without _id get PATH:LINE both times, so the second run
    overwrites (every document at _version 2) and the index holds one document per input line;
    without it, the cluster gives them new ids and the second run adds copies."""
    c = opensearch_cluster
    n = 4000
    lines = []
    for i in range(n):
        lines.append('{"index":{"_id":"kept-%d"}}' % i if i % 2 else '{"index":{}}')
        lines.append('{"n":%d}' % i)
    path = tmp_path / "part-00000.ndjson"
    path.write_text("\n".join(lines) + "\n")
    expected = {f"kept-{i}" if i % 2 else f"{path}:{2 * i + 1}" for i in range(n)}

    create_index(c, "bulk-rerun", 3)
    for _ in range(2):
        summary, _ = bulk(c, "bulk-rerun", ["--id-from-position"], path=path, tmp_path=tmp_path)
        assert (summary["documents_read"], summary["indexed"]) == (n, n), summary
    ok(c, "POST", "/bulk-rerun/_refresh")
    assert ok(c, "GET", "/bulk-rerun/_count")["count"] == n
    hits = ok(c, "POST", "/bulk-rerun/_search", {"size": n, "_source": False,
                                                  "version": True})["hits"]["hits"]
    assert {h["_id"] for h in hits} == expected
    assert {h["_version"] for h in hits} == {2}

    # The same two runs without the flag: the half without _id is indexed twice.
    create_index(c, "bulk-rerun", 3)
    for _ in range(2):
        bulk(c, "bulk-rerun", [], path=path, tmp_path=tmp_path)
    ok(c, "POST", "/bulk-rerun/_refresh")
    assert ok(c, "GET", "/bulk-rerun/_count")["count"] == n + n // 2
    c.request("DELETE", "/bulk-rerun")


def test_id_from_position_is_refused_with_from_route(opensearch_cluster):
    proc = hammer(["bulk", "--cluster", opensearch_cluster.url(0), "--index", "any",
                   "--from-route", "--id-from-position"], "")
    assert proc.returncode == 2
    assert "--id-from-position: not with --from-route" in proc.stderr
