"""`hammer dark` finds its regular instances while running (issue 46, item 5): every address
of an upstream's DNS name is an instance, re-resolved every --upstream-dns-interval, and the
members of a ZooKeeper cluster (announced by `hammer serve --announce`) are instances too. An
instance that leaves is drained (its requests in flight finish, no new one goes to it) and the
connections to the instances that stay are kept.

The DNS name lives in a private /etc/hosts: the proxy runs in a mount namespace of its own
(`unshare -m`) where a file of the test's tmp dir is bind-mounted over /etc/hosts, so the
test changes the name's addresses by rewriting that file (in place: the bind mount follows the
inode). The instances are `hammer serve` on 127.0.0.2, .3 and .4, one port.
"""
import json
import shutil
import subprocess
import threading
import urllib.request

import pytest

from harness import HammerServe, free_port, run_hammer, wait_for
from prerequisites import require
from zookeeper import zk  # noqa: F401  (fixture)
from zookeeper import require as require_zookeeper

NAME = "api.hammer.test"


def unshare_works():
    if shutil.which("unshare") is None:
        return False
    r = subprocess.run(["unshare", "-m", "sh", "-c", "mount --bind /dev/null /etc/hostname"],
                       capture_output=True, timeout=10)
    return r.returncode == 0


def write_hosts(path, *ips):
    """Rewrites the private hosts file in place (one write of the whole text)."""
    text = "".join(f"{ip} {NAME}\n" for ip in ips)
    with open(path, "r+") as f:
        f.truncate(0)
        f.write(text)


def load(url, n, concurrency=8):
    r = run_hammer(["load", "-", "-c", str(concurrency), "--emit", "none", "-q",
                    "--summary-json", "/dev/stdout"], input_text=(url + "\n") * n)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def failures(summary):
    return {k: v for k, v in (summary.get("failures") or {}).items() if v}


def requests_of(*instances):
    return [s.stats()["requests"] for s in instances]


@pytest.fixture
def hosts_file(tmp_path):
    require(unshare_works(), "`unshare -m` with a bind mount is not permitted here (needs root "
            "or user namespaces)", "run the tests as root or with unprivileged user namespaces")
    path = tmp_path / "hosts"
    path.write_text("")
    return path


def private_hosts(hosts_file):
    """A wrapper running the proxy with `hosts_file` as its /etc/hosts."""
    return ["unshare", "-m", "sh", "-c", 'mount --bind "$0" /etc/hosts && exec "$@"',
            str(hosts_file)]


def test_each_address_of_a_name_is_an_instance_and_a_removed_one_is_drained(
        servers, proxies, hosts_file):
    port = free_port()
    a, b, c = (servers(listen=f"127.0.0.{i}:{port}") for i in (2, 3, 4))
    write_hosts(hosts_file, "127.0.0.2", "127.0.0.3")
    proxy = proxies("--upstream", f"http://{NAME}:{port}", "--upstream-dns-interval", "100ms",
                    wrapper=private_hosts(hosts_file))
    summary = load(proxy.url("/user"), 300)
    assert summary["requests"] == 300 and not failures(summary), summary
    served = requests_of(a, b, c)
    assert served[0] > 50 and served[1] > 50 and served[2] == 0, served
    m = proxy.metrics()
    assert m["hammer_dark_upstream_instances"] == 2
    assert any(f"({'127.0.0.2'}:{port})" in k for k in m if k.startswith(
        "hammer_dark_upstream_outstanding")), m
    connections_b = b.stats()["server"]["connections_accepted"]

    # Slow requests in flight on both, then .2 leaves the name and .4 joins it.
    slow = []

    def one_slow():
        with urllib.request.urlopen(proxy.url("/delay/3000"), timeout=30) as r:
            slow.append((r.status, r.read()))

    threads = [threading.Thread(target=one_slow) for _ in range(8)]
    for t in threads:
        t.start()
    wait_for(lambda: sum(v for k, v in proxy.metrics().items()
                         if k.startswith("hammer_dark_upstream_outstanding")) == 8,
             what="the slow requests in flight")
    in_flight_on_a = [v for k, v in proxy.metrics().items()
                      if k.startswith("hammer_dark_upstream_outstanding") and "127.0.0.2:" in k]
    write_hosts(hosts_file, "127.0.0.3", "127.0.0.4")
    proxy.wait_for_metric('hammer_dark_upstream_changes_total{change="removed"}',
                          lambda v: v == 1)
    m = proxy.metrics()
    assert m["hammer_dark_upstream_draining"] == (1 if in_flight_on_a[0] else 0), m
    served_by_a = a.stats()["requests"]
    summary = load(proxy.url("/user"), 300)
    assert summary["requests"] == 300 and not failures(summary), summary
    for t in threads:
        t.join(timeout=30)
    # The drained instance finished what it had and got nothing new; the new one took a share.
    assert slow == [(200, b"ok\n")] * 8, slow
    assert a.stats()["requests"] == served_by_a
    assert c.stats()["requests"] > 50
    # The connections to .3, which stayed, were kept: no more than the load's eight (and the
    # slow requests') new ones, not a reconnect of the pool.
    assert b.stats()["server"]["connections_accepted"] - connections_b <= 8
    m = proxy.metrics()
    assert m["hammer_dark_upstream_instances"] == 2
    assert m["hammer_dark_upstream_draining"] == 0
    assert m['hammer_dark_upstream_changes_total{change="added"}'] == 3


def test_a_name_that_stops_resolving_keeps_its_last_addresses(servers, proxies, hosts_file):
    port = free_port()
    a = servers(listen=f"127.0.0.2:{port}")
    write_hosts(hosts_file, "127.0.0.2")
    proxy = proxies("--upstream", f"http://{NAME}:{port}", "--upstream-dns-interval", "100ms",
                    wrapper=private_hosts(hosts_file))
    write_hosts(hosts_file)  # the name is gone
    proxy.wait_for_metric('hammer_dark_upstream_discovery_failures_total{source="dns"}',
                          lambda v: v >= 2)
    summary = load(proxy.url("/user"), 50)
    assert summary["requests"] == 50 and not failures(summary), summary
    assert a.stats()["requests"] == 50
    assert proxy.metrics()["hammer_dark_upstream_instances"] == 1


def test_regular_instances_from_zookeeper_come_and_go(zk, servers, proxies):  # noqa: F811
    require_zookeeper()
    cluster = zk.url("/hammer/clusters/web")
    first = [servers("--announce", cluster) for _ in range(2)]
    proxy = proxies("--upstream", cluster)
    proxy.wait_for_metric("hammer_dark_upstream_instances", lambda v: v == 2)
    summary = load(proxy.url("/user"), 200)
    assert summary["requests"] == 200 and not failures(summary), summary
    assert all(n > 30 for n in requests_of(*first)), requests_of(*first)

    third = servers("--announce", cluster)
    proxy.wait_for_metric("hammer_dark_upstream_instances", lambda v: v == 3)
    summary = load(proxy.url("/user"), 300)
    assert not failures(summary), summary
    assert third.stats()["requests"] > 30

    # A member that stops is drained: no user sees it go.
    gone = first[0]
    before = gone.stats()["requests"]
    gone.stop()
    proxy.wait_for_metric("hammer_dark_upstream_instances", lambda v: v == 2)
    summary = load(proxy.url("/user"), 300)
    assert summary["requests"] == 300 and not failures(summary), summary
    m = proxy.metrics()
    assert m['hammer_dark_upstream_changes_total{change="removed"}'] == 1
    assert m["hammer_dark_retries_total"] == 0, m  # it left before any try found it gone
    assert before > 0

    # A member written by hand may carry a weight.
    heavy = HammerServe()
    try:
        zk.create("/hammer/clusters/web/members/m-by-hand-0000009999",
                  json.dumps({"url": f"http://{heavy.address}", "weight": 4}))
        proxy.wait_for_metric("hammer_dark_upstream_instances", lambda v: v == 3)
        counts_before = requests_of(heavy, first[1], third)
        summary = load(proxy.url("/user"), 600)
        assert not failures(summary), summary
        shares = [n - b for n, b in zip(requests_of(heavy, first[1], third), counts_before)]
        assert shares[0] > 2 * max(shares[1], shares[2]), shares  # 4:1:1, least-request
    finally:
        heavy.stop()
