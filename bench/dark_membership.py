#!/usr/bin/env python3
"""How fast `hammer dark` follows ZooKeeper: the time from a change in ZooKeeper to the proxy's
membership view showing it. docs/dark.md promises "within a second"; a test on a shared machine
cannot hold a wall-clock limit, so the figure is measured here instead.

Setup (all on 127.0.0.1): a real ZooKeeper (Debian's, tests/integration/zookeeper.py), one
regular `hammer serve`, one `hammer dark --membership zk://...`. Per round:
  announce   a new `hammer serve --announce` dark instance starts; measured from the moment its
             ephemeral member znode exists (read back through ZooKeeper) until the proxy's
             /hammer/dark/membership counts it;
  config     the config znode's multiplier is set; measured from the write until the proxy
             reports the new multiplier.
The proxy is polled every 5 ms, which bounds the resolution. Reports the median and the maximum
over the rounds (medians of several rounds: the machine is shared and noisy).

Needs the kazoo client (tests/integration/requirements.txt, installed by scripts/jvm-deps.sh):
Debian's zkCli, the helper's fallback, takes a second per call.
Usage: bench/dark_membership.py [--rounds 10] [--hammer PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import urllib.request
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (REPO, default_build_dir, default_hammer, env_int,  # noqa: E402
                      snapshot_hammer, start_hammer, stop, write_results)
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
import zookeeper  # noqa: E402
from zookeeper import ZooKeeperServer, available  # noqa: E402


def membership(admin):
    with urllib.request.urlopen(f"http://{admin}/hammer/dark/membership", timeout=5) as r:
        return json.loads(r.read())


def until(predicate, timeout=30.0):
    """Seconds until predicate() holds, polling every 5 ms."""
    began = time.monotonic()
    while not predicate():
        if time.monotonic() - began > timeout:
            sys.exit(f"bench: no change seen in {timeout}s")
        time.sleep(0.005)
    return time.monotonic() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=env_int("BENCH_ROUNDS", 10))
    parser.add_argument("--hammer", default=default_hammer())
    args = parser.parse_args()
    if not available():
        sys.exit("bench: needs java and Debian's zookeeper (scripts/deps.sh test)")
    if zookeeper.KazooClient is None:
        sys.exit("bench: needs the kazoo package (scripts/jvm-deps.sh spark installs it)")
    out = os.path.join(default_build_dir(), "dark_membership")
    hammer = snapshot_hammer(args.hammer, out, "hammer", "dark")
    root = f"/bench-{uuid.uuid4().hex[:8]}"
    announce, config = [], []
    with ZooKeeperServer() as zk:
        zk.create(f"{root}/config", json.dumps({"regular": "web", "dark": {"canary": {
            "multiplier": 1.0}}}))
        regular, (regular_address,) = start_hammer([hammer, "serve", "--listen", "127.0.0.1:0"])
        proxy, (_, admin) = start_hammer([hammer, "dark", "--listen", "127.0.0.1:0", "--admin",
                                          "127.0.0.1:0", "--upstream", f"http://{regular_address}",
                                          "--membership", zk.url(root), "--regular-cluster",
                                          "web"], lines=2)
        dark = []
        try:
            members = f"{root}/clusters/canary/members"
            for i in range(args.rounds):
                before = len(zk.children(members))
                instance, _ = start_hammer([hammer, "serve", "--listen", "127.0.0.1:0",
                                            "--announce", zk.url(f"{root}/clusters/canary")])
                dark.append(instance)
                until(lambda: len(zk.children(members)) == before + 1)
                announce.append(until(lambda: any(
                    c["instances"] == before + 1 for c in membership(admin)["dark"])))
                multiplier = 1.0 + (i + 1) / 10
                zk.set(f"{root}/config", json.dumps({"regular": "web", "dark": {"canary": {
                    "multiplier": multiplier}}}))
                config.append(until(lambda: any(
                    c["multiplier"] == multiplier for c in membership(admin)["dark"])))
        finally:
            stop(*dark, proxy, regular)
    with open(os.path.join(out, "raw.tsv"), "w") as f:
        f.write("round\tannounce_s\tconfig_s\n")
        for i, (a, c) in enumerate(zip(announce, config)):
            f.write(f"{i}\t{a:.4f}\t{c:.4f}\n")
    summary = (
        "## Dark membership: ZooKeeper change to the proxy's view\n\n"
        f"{args.rounds} rounds, polled every 5 ms (bench/dark_membership.py)\n\n"
        "| change | median | max |\n|---|---:|---:|\n"
        f"| new dark instance announced | {statistics.median(announce) * 1000:.0f} ms "
        f"| {max(announce) * 1000:.0f} ms |\n"
        f"| config znode (multiplier) | {statistics.median(config) * 1000:.0f} ms "
        f"| {max(config) * 1000:.0f} ms |\n")
    write_results(out, "dark_membership", summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
