"""`hammer dark --membership zk://...` against a real ZooKeeper: proxies register themselves in
the regular cluster, dark `hammer serve --announce` instances in the dark cluster, the config
znode sets the multiplier, and the fork rate follows every change live."""
import json
import uuid

from dark_support import dark_received, drive
from harness import wait_for
from zookeeper import zk  # noqa: F401


def membership(proxy):
    return json.loads(proxy.get_admin("/hammer/dark/membership"))


def copies(proxy, instances):
    """The proxy's copy counters for the dark cluster once every copy has ended, and the copies
    its instances received."""
    m = proxy.settled_metrics()
    counts = {name: m[f'hammer_dark_{name}_total{{cluster="canary"}}']
              for name in ("selected", "sent", "dropped", "backed_off")}
    counts["received"] = dark_received(*instances)
    return counts


def forked_by(proxy, instances, n):
    """What n GETs through the proxy made of copies: how much each counter grew."""
    before = copies(proxy, instances)
    assert drive(proxy.url("/"), n)["succeeded"] == n
    after = copies(proxy, instances)
    got = {name: after[name] - before[name] for name in after}
    # Every copy the strategy selected was sent or counted unsent (a machine too busy to answer
    # copies fills --dark-max-in-flight), and the dark instances received every copy sent.
    assert got["sent"] + got["dropped"] + got["backed_off"] == got["selected"], got
    assert got["received"] == got["sent"], got
    return got


def test_fork_rate_follows_zookeeper_membership(zk, servers, proxies):
    root = f"/hammer-{uuid.uuid4().hex[:8]}"
    zk.create(f"{root}/config", json.dumps({"regular": "web", "dark": {"canary": {
        "multiplier": 1.0, "strategy": "relative"}}}))
    # Ns = 4: this proxy plus three other regular members registered by hand.
    for i in range(3):
        zk.create(f"{root}/clusters/web/members/m-other{i}-",
                  json.dumps({"url": f"http://127.0.0.1:{9000 + i}"}), sequence=True)
    regular = servers()
    dark = [servers("--announce", zk.url(f"{root}/clusters/canary")) for _ in range(2)]
    threads = 2
    proxy = proxies("--upstream", f"http://{regular.address}", "--membership", zk.url(root),
                    "--regular-cluster", "web", "--threads", str(threads))
    view = wait_for(lambda: (m := membership(proxy))["regular_instances"] == 4 and
                    m["dark"] and m["dark"][0]["instances"] == 2 and m)
    assert view["stale"] is False
    # The proxy registered itself: one member carries its address.
    assert any(proxy.address in (zk.get(f"{root}/clusters/web/members/{c}") or "")
               for c in zk.children(f"{root}/clusters/web/members"))

    # The strategy selects Nd / Ns * multiplier copies per request, exactly but for one per
    # proxy thread (each thread keeps its own fraction).
    got = forked_by(proxy, dark, 10_000)
    assert abs(got["selected"] - 1 * 2 / 4 * 10_000) <= threads, got

    # A third dark instance announces itself: the watch brings it to the proxy (how fast is
    # measured by bench/dark_membership.py; here the deadline is only a safety net).
    extra = servers("--announce", zk.url(f"{root}/clusters/canary"))
    wait_for(lambda: membership(proxy)["dark"][0]["instances"] == 3)
    got = forked_by(proxy, dark + [extra], 8_000)
    assert abs(got["selected"] - 1 * 3 / 4 * 8_000) <= threads, got

    # The config znode changes the multiplier live.
    zk.set(f"{root}/config", json.dumps({"regular": "web", "dark": {"canary": {
        "multiplier": 0.5}}}))
    wait_for(lambda: membership(proxy)["dark"][0]["multiplier"] == 0.5)
    got = forked_by(proxy, dark + [extra], 8_000)
    assert abs(got["selected"] - 0.5 * 3 / 4 * 8_000) <= threads, got

    # ZooKeeper dies: the last known values stay in force and the metric says so.
    zk.kill()
    wait_for(lambda: membership(proxy)["stale"])
    assert proxy.metrics()["hammer_dark_membership_stale"] == 1
    got = forked_by(proxy, dark + [extra], 4_000)
    assert abs(got["selected"] - 0.5 * 3 / 4 * 4_000) <= threads, got

    # It comes back: the session re-establishes itself and the view is fresh again.
    zk.start()
    wait_for(lambda: not membership(proxy)["stale"], timeout=15.0)
    assert membership(proxy)["dark"][0]["instances"] == 3


def test_posts_are_not_forked_with_zookeeper_membership(zk, servers, proxies):
    root = f"/hammer-{uuid.uuid4().hex[:8]}"
    zk.create(f"{root}/config", json.dumps({"regular": "web", "dark": {"canary": {}}}))
    regular = servers()
    dark = servers("--announce", zk.url(f"{root}/clusters/canary"))
    proxy = proxies("--upstream", f"http://{regular.address}", "--membership", zk.url(root),
                    "--regular-cluster", "web")
    wait_for(lambda: (m := membership(proxy))["dark"] and m["dark"][0]["instances"] == 1)
    drive(proxy.url("/echo"), 300, method="POST")
    drive(proxy.url("/"), 100)
    assert regular.stats()["by_method"] == {"POST": 300, "GET": 100}
    # Ns = 1 (this proxy), Nd = 1, multiplier 1: every GET is copied, no POST is.
    proxy.settled_metrics()
    assert dark.stats()["by_method"] == {"GET": 100}
