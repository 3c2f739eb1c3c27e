#!/usr/bin/env python3
"""Shard-aware vs round-robin bulk indexing into a real 3-node OpenSearch 2.19 cluster.

One cluster (tests/integration/opensearch.py: three embedded nodes in one JVM on 127.0.0.1),
one corpus (N documents with ids doc-<i> and ~200-byte log-like sources), two ways of sending
it with the same hammer, batches (1000 documents / 5 MiB) and concurrency (2 writers per
shard, 12 requests in flight):
  shard-aware   hammer bulk                        each shard's batch to its primary's node
  round-robin   hammer bulk --routing round-robin  batches in input order to nodes in turn,
                                                   as a client that does not route
Each run writes into a fresh index (6 primaries, refresh_interval 30s, replicas 1 and then 0),
and we read, around it:
  docs/s           hammer's indexed documents / its wall time (discovery included)
  inter-node bytes the sum over nodes of _nodes/stats/transport tx_size_in_bytes
  forwarded        the share of primary shard work that arrived from another node, from the
                   nodes' indexing-pressure totals ((combined - coordinating) / primary; see
                   tests/integration/bulk_support.py)
  cluster CPU      user+sys CPU of the cluster's JVM per document
Runs alternate (the order rotates each round) after one untimed warm-up per mode, ratios are
formed inside a round, and the report gives medians over rounds (min-max in parentheses).

Standard library only. Writes the raw runs under --out and a summary to $BENCH_SUMMARY_DIR.
Usage: bench/bulk_routing.py [--rounds 3] [--documents 200000] [--replicas 1,0] [--hammer PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (REPO, RunInfo, default_build_dir, default_hammer, env_int,  # noqa: E402
                      median, proc_cpu_seconds, snapshot_hammer, span, write_results)
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
from bulk_support import counter_delta, locality, node_counters, synthetic_corpus  # noqa: E402
from opensearch import OpenSearchCluster, available  # noqa: E402

SHARDS = 6
MODES = ("shard-aware", "round-robin")


def request(cluster, method, path, body=None):
    status, data = cluster.request(method, path, body)
    if status not in (200, 201):
        raise RuntimeError(f"{method} {path}: {status} {data}")
    return data


def fresh_index(cluster, name, replicas):
    cluster.request("DELETE", f"/{name}")
    request(cluster, "PUT", f"/{name}", {"settings": {
        "number_of_shards": SHARDS, "number_of_replicas": replicas, "refresh_interval": "30s"}})
    request(cluster, "GET", f"/_cluster/health/{name}?wait_for_status=green&timeout=120s")


def run_once(cluster, hammer, corpus, documents, mode, replicas, out_dir, tag):
    index = f"bench-{mode}-{replicas}"
    fresh_index(cluster, index, replicas)
    summary_path = os.path.join(out_dir, f"{tag}.json")
    jvm = cluster._proc.pid  # the harness JVM: all three nodes
    before, cpu0 = node_counters(cluster.any_url()), proc_cpu_seconds(jvm)
    urls = ",".join(n.url for n in cluster.nodes.values())
    proc = subprocess.run([hammer, "bulk", "--cluster", urls, "--index", index, "--routing", mode,
                           "--quiet", "--summary-json", summary_path, corpus],
                          capture_output=True, text=True, timeout=900)
    cpu1, after = proc_cpu_seconds(jvm), node_counters(cluster.any_url())
    if proc.returncode != 0:
        raise RuntimeError(f"hammer bulk failed: {proc.stderr[-2000:]}")
    with open(summary_path) as f:
        summary = json.load(f)
    request(cluster, "POST", f"/{index}/_refresh")
    count = request(cluster, "GET", f"/{index}/_count")["count"]
    cluster.request("DELETE", f"/{index}")
    if summary["indexed"] != documents or count != documents:
        raise RuntimeError(f"{mode}: indexed {summary['indexed']}, count {count}, "
                           f"expected {documents}")
    delta = counter_delta(before, after)
    forwarded, primary, local = locality(delta)
    return {
        "mode": mode, "replicas": replicas, "docs_s": summary["docs_per_second"],
        "seconds": summary["seconds"], "tx_bytes": delta["total"]["tx_bytes"],
        "forwarded_share": forwarded / primary if primary else float("nan"),
        "cluster_cpu_us_per_doc": (cpu1 - cpu0) * 1e6 / documents,
        "requests": summary["requests"], "shard_requests": summary["shard_requests"],
        "shard_requests_remote": summary["shard_requests_remote"],
        "body_bytes": summary["body_bytes_sent"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=env_int("BENCH_ROUNDS", 5))
    ap.add_argument("--documents", type=int, default=200_000)
    ap.add_argument("--replicas", default="1,0", help="comma list of replica counts")
    ap.add_argument("--hammer", default=default_hammer())
    ap.add_argument("--build-dir", default=default_build_dir())
    ap.add_argument("--out", default=None, help="results dir (default BUILD_DIR/bulk_routing)")
    args = ap.parse_args()
    if not available():
        print("bulk_routing: needs java 17 and mvn; skipped", file=sys.stderr)
        return 0
    out_dir = args.out or os.path.join(args.build_dir, "bulk_routing")
    os.makedirs(out_dir, exist_ok=True)
    hammer_source = os.path.relpath(args.hammer, REPO)
    hammer = snapshot_hammer(args.hammer, args.build_dir, "hammer-under-test-bulk", "bulk")
    corpus = os.path.join(out_dir, "corpus.ndjson")
    corpus_bytes = synthetic_corpus(corpus, args.documents)
    warm = os.path.join(out_dir, "warmup.ndjson")
    warm_documents = args.documents  # a full-size run per mode: the JIT needs it (round 1 ran slow)
    synthetic_corpus(warm, warm_documents, seed=11)
    replica_counts = [int(r) for r in args.replicas.split(",")]

    info = RunInfo()
    runs = []
    with OpenSearchCluster() as cluster:
        print(f"# bulk_routing: cluster up in {cluster.startup_seconds:.0f} s; "
              f"{args.documents:,} documents ({corpus_bytes / 1e6:.0f} MB), replicas "
              f"{replica_counts}, {args.rounds} rounds", file=sys.stderr)
        for mode in MODES:  # JIT and caches warm before anything is timed
            run_once(cluster, hammer, warm, warm_documents, mode, replica_counts[0], out_dir,
                     f"warmup-{mode}")
        for replicas in replica_counts:
            for rnd in range(args.rounds):
                order = MODES if rnd % 2 == 0 else MODES[::-1]
                for mode in order:
                    r = run_once(cluster, hammer, corpus, args.documents, mode, replicas, out_dir,
                                 f"r{replicas}-{rnd}-{mode}")
                    r["round"] = rnd
                    runs.append(r)
                    print(f"  replicas {replicas} round {rnd + 1}/{args.rounds} {mode:<12} "
                          f"{r['docs_s']:>9,.0f} docs/s  {r['tx_bytes'] / 1e6:7.1f} MB between "
                          f"nodes  forwarded {100 * r['forwarded_share']:5.1f}%  cluster CPU "
                          f"{r['cluster_cpu_us_per_doc']:6.1f} µs/doc", file=sys.stderr)
    with open(os.path.join(out_dir, "runs.json"), "w") as f:
        json.dump(runs, f, indent=1)

    table = ["| replicas | mode | docs/s | MB between nodes | forwarded | cluster CPU µs/doc |"
             " bulk requests | shard requests (remote) |",
             "|---:|---|---:|---:|---:|---:|---:|---:|"]
    verdict = []
    for replicas in replica_counts:
        mine = [r for r in runs if r["replicas"] == replicas]
        for mode in MODES:
            rs = [r for r in mine if r["mode"] == mode]
            table.append(
                f"| {replicas} | {mode} | {median([r['docs_s'] for r in rs]):,.0f} | "
                f"{median([r['tx_bytes'] for r in rs]) / 1e6:.1f} | "
                f"{100 * median([r['forwarded_share'] for r in rs]):.1f}% | "
                f"{median([r['cluster_cpu_us_per_doc'] for r in rs]):.1f} | "
                f"{median([r['requests'] for r in rs]):.0f} | "
                f"{median([r['shard_requests'] for r in rs]):.0f} "
                f"({median([r['shard_requests_remote'] for r in rs]):.0f}) |")
        by_round = {}
        for r in mine:
            by_round.setdefault(r["round"], {})[r["mode"]] = r
        pairs = [(v["shard-aware"], v["round-robin"]) for v in by_round.values() if len(v) == 2]
        speed = [sa["docs_s"] / rr["docs_s"] for sa, rr in pairs]
        traffic = [1 - sa["tx_bytes"] / rr["tx_bytes"] for sa, rr in pairs]
        cpu = [sa["cluster_cpu_us_per_doc"] / rr["cluster_cpu_us_per_doc"] for sa, rr in pairs]
        verdict.append(
            f"- replicas {replicas}: shard-aware ÷ round-robin docs/s = {span(speed)} "
            f"(goal ≥ 1.3: {'met' if median(speed) >= 1.3 else 'MISSED'}); inter-node bytes "
            f"{100 * median(traffic):.0f}% less ({100 * min(traffic):.0f}–{100 * max(traffic):.0f}%; "
            f"goal ≥ 60%: {'met' if median(traffic) >= 0.6 else 'MISSED'}); cluster CPU per "
            f"document × {span(cpu)}")

    summary = "\n".join([
        f"## bulk_routing — shard-aware vs round-robin `hammer bulk` into OpenSearch 2.19 "
        f"({info.title_time()})",
        "",
        f"{args.documents:,} documents ({corpus_bytes / 1e6:.0f} MB NDJSON, ids doc-<i>), "
        f"{SHARDS} primaries, refresh_interval 30s, a fresh index per run; 3 nodes in one JVM "
        f"on 127.0.0.1 (node.processors 1 each); hammer defaults (1000 docs / 5 MiB batches, 2 "
        f"writers per shard). {args.rounds} rounds per replica count, order alternating, after "
        f"one untimed warm-up per mode; medians over rounds. {info.host(hammer_source)}",
        "",
        *table,
        "",
        *verdict,
        "",
        "Forwarded = share of primary shard work that reached its node from another node "
        "(the cluster's own indexing-pressure counters). MB between nodes = transport bytes "
        "sent, all nodes, during the run (replication included).",
    ]) + "\n"
    write_results(out_dir, "bulk_routing", summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
