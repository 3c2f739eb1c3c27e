"""Smoke test of the real 3-node OpenSearch 2.19 cluster (tests/integration/opensearch.py).

Checks what the shard-aware bulk tests rely on: three nodes on loopback, `GET /`, shard placement
(`_cat/shards`, `_search_shards?routing=`), `_nodes/http`, the transport byte counters, and that
the cluster keeps answering after one node is stopped (replicas 1). Standard library only.

Needs java 17 and mvn; the first build downloads ~50 MB from Maven Central.
"""
import json
import re
from urllib.parse import quote

from opensearch import opensearch_cluster  # noqa: F401  (session fixture)

import pytest

INDEX = "smoke"
DOC_IDS = [str(i) for i in range(1, 21)] + ["hello", "ü-ß", "😀"]


def ok(cluster, method, path, body=None, node=None, expect=(200, 201)):
    status, data = cluster.request(method, path, body, node=node)
    assert status in expect, f"{method} {path}: {status} {data}"
    return data


@pytest.fixture(scope="module")
def smoke_index(opensearch_cluster):
    c = opensearch_cluster
    ok(c, "PUT", f"/{INDEX}", {"settings": {"number_of_shards": 6, "number_of_replicas": 1}})
    ok(c, "GET", f"/_cluster/health/{INDEX}?wait_for_status=green&timeout=60s")
    lines = []
    for doc_id in DOC_IDS:
        lines.append('{"index":{"_id":%s}}' % json.dumps(doc_id))
        lines.append('{"n":%d}' % len(lines))
    resp = ok(c, "POST", f"/{INDEX}/_bulk?refresh=true", "\n".join(lines) + "\n")
    assert resp["errors"] is False, resp
    yield INDEX
    c.request("DELETE", f"/{INDEX}")


def test_three_nodes_on_loopback(opensearch_cluster):
    c = opensearch_cluster
    assert len(c.http_addresses) == 3
    assert all(a.startswith("127.0.0.1:") for a in c.http_addresses)
    for i in range(3):
        nodes = ok(c, "GET", "/_cat/nodes?format=json&h=name,ip,node.role", node=i)
        assert sorted(n["name"] for n in nodes) == ["node-1", "node-2", "node-3"]
        assert {n["ip"] for n in nodes} == {"127.0.0.1"}
    health = ok(c, "GET", "/_cluster/health")
    assert health["number_of_nodes"] == 3 and health["status"] == "green"


def test_root_reports_opensearch_2_19(opensearch_cluster):
    info = ok(opensearch_cluster, "GET", "/")
    assert info["version"]["distribution"] == "opensearch"
    assert re.fullmatch(r"2\.19\.\d+", info["version"]["number"]), info["version"]


def test_nodes_http_matches_harness(opensearch_cluster):
    c = opensearch_cluster
    nodes = ok(c, "GET", "/_nodes/http")["nodes"]
    by_id = {node_id: n["http"]["publish_address"] for node_id, n in nodes.items()}
    # publish_address may be "host/ip:port"; keep the part after the slash.
    assert {a.split("/")[-1] for a in by_id.values()} == set(c.http_addresses)
    assert set(by_id) == {n.id for n in c.nodes.values()}


def test_shard_placement(opensearch_cluster, smoke_index):
    c = opensearch_cluster
    shards = ok(c, "GET", f"/_cat/shards/{smoke_index}?format=json&h=index,shard,prirep,state,id,node")
    assert len(shards) == 12
    assert {s["state"] for s in shards} == {"STARTED"}
    names = {n.id: n.name for n in c.nodes.values()}
    for s in shards:
        assert names[s["id"]] == s["node"]
    for shard in range(6):
        copies = [s for s in shards if int(s["shard"]) == shard]
        assert sorted(s["prirep"] for s in copies) == ["p", "r"]
        assert copies[0]["node"] != copies[1]["node"]
    count = ok(c, "GET", f"/{smoke_index}/_count")["count"]
    assert count == len(DOC_IDS)


def test_search_shards_routing_matches_documents(opensearch_cluster, smoke_index):
    c = opensearch_cluster
    # Where each document actually lives, from the search hits.
    hits = ok(c, "POST", f"/{smoke_index}/_search",
              {"size": 100, "explain": True, "query": {"match_all": {}}})["hits"]["hits"]
    actual = {h["_id"]: int(re.fullmatch(r"\[.*\]\[(\d+)\]", h["_shard"]).group(1)) for h in hits}
    assert set(actual) == set(DOC_IDS)
    primaries = {int(s["shard"]): s["id"] for s in ok(
        c, "GET", f"/_cat/shards/{smoke_index}?format=json&h=shard,prirep,id") if s["prirep"] == "p"}
    for doc_id, shard in actual.items():
        resp = ok(c, "GET", f"/{smoke_index}/_search_shards?routing={quote(doc_id)}")
        groups = resp["shards"]
        assert len(groups) == 1
        assert {copy["shard"] for copy in groups[0]} == {shard}, doc_id
        primary = [copy for copy in groups[0] if copy["primary"]]
        assert primary and primary[0]["node"] == primaries[shard]
    # Two values worked out by hand from the routing formula (6 shards, routing_num_shards 768).
    assert actual["1"] == 4 and actual["hello"] == 5
    meta = ok(c, "GET", f"/_cluster/state/metadata/{smoke_index}"
                        "?filter_path=metadata.indices.*.routing_num_shards")
    assert meta["metadata"]["indices"][smoke_index]["routing_num_shards"] == 768


def test_transport_counters(opensearch_cluster, smoke_index):
    stats = ok(opensearch_cluster, "GET", "/_nodes/stats/transport")["nodes"]
    assert len(stats) == 3
    for node in stats.values():
        t = node["transport"]
        assert t["rx_size_in_bytes"] > 0 and t["tx_size_in_bytes"] > 0, t
        assert t["rx_count"] > 0 and t["tx_count"] > 0, t


def test_stop_one_node_cluster_still_answers(opensearch_cluster, smoke_index):
    c = opensearch_cluster
    # The hardest node to lose: the elected cluster manager.
    manager = ok(c, "GET", "/_cat/cluster_manager?format=json")[0]["node"]
    c.stop_node(manager)
    try:
        survivors = [n for n in c.nodes.values() if n.running]
        assert len(survivors) == 2
        for n in survivors:
            health = ok(c, "GET", "/_cluster/health?wait_for_nodes=2&timeout=30s", node=n.name)
            assert health["number_of_nodes"] == 2
            assert health["status"] == "yellow", health
            nodes = ok(c, "GET", "/_cat/nodes?format=json&h=name", node=n.name)
            assert sorted(x["name"] for x in nodes) == sorted(s.name for s in survivors)
        # Every primary is still active (replicas were promoted): reads and writes work.
        assert ok(c, "GET", f"/{smoke_index}/_count")["count"] == len(DOC_IDS)
        bulk = "".join('{"index":{"_id":"late-%d"}}\n{"n":%d}\n' % (i, i) for i in range(30))
        resp = ok(c, "POST", f"/{smoke_index}/_bulk?refresh=true", bulk)
        assert resp["errors"] is False
        assert ok(c, "GET", f"/{smoke_index}/_count")["count"] == len(DOC_IDS) + 30
        down = c.node(manager)
        with pytest.raises(OSError):
            c.request("GET", "/", node=down.name, timeout=5)
    finally:
        # Give the session fixture its third node back.
        c.start_node(manager)
    health = ok(c, "GET", "/_cluster/health?wait_for_nodes=3&wait_for_status=green&timeout=60s")
    assert health["number_of_nodes"] == 3 and health["status"] == "green"
