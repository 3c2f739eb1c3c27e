"""`hammer dark` with real processes on loopback: regular and dark `hammer serve` instances, the
proxy in between, `hammer load` driving it."""
import json
import urllib.error
import urllib.request

import pytest

from dark_support import dark_received, drive, report_endpoint
from harness import run_hammer


def test_forks_multiplier_times_nd_over_ns_exactly(servers, proxies):
    regular = [servers(), servers()]
    dark = [servers(), servers()]
    threads = 2
    proxy = proxies("--upstream", ",".join(f"http://{s.address}" for s in regular),
                    "--dark", "canary=" + ",".join(f"http://{s.address}" for s in dark),
                    "--regular-instances", "4", "--dark-multiplier", "canary=1",
                    "--threads", str(threads))
    summary = drive(proxy.url("/"), 10_000)
    assert summary["succeeded"] == 10_000
    # Every user request was served by the regular cluster, spread over both instances.
    assert sum(s.stats()["requests"] for s in regular) == 10_000
    m = proxy.settled_metrics()  # copies are never awaited: count them once all have ended
    expected = 1 * 2 / 4 * 10_000
    got = dark_received(*dark)
    # The fork decision is exact; a copy chosen while --dark-max-in-flight copies were already
    # in flight (a starved dark side on a busy machine) is dropped and counted, never queued,
    # so the decisions are the copies sent plus those dropped.
    dropped = m['hammer_dark_dropped_total{cluster="canary"}']
    assert abs(got + dropped - expected) <= threads, (got, dropped)
    # Copies are spread over the dark instances and all carry the header.
    assert all(s.stats()["by_header"]["X-Hammer-Dark"] > 0 for s in dark)
    assert m['hammer_dark_sent_total{cluster="canary"}'] == got
    assert m['hammer_dark_succeeded_total{cluster="canary"}'] == got
    assert m['hammer_dark_instances{cluster="canary"}'] == 2
    assert m["hammer_dark_regular_instances"] == 4


def test_unsafe_methods_are_not_forked(servers, proxies):
    regular, dark = servers(), servers()
    proxy = proxies("--upstream", f"http://{regular.address}",
                    "--dark", f"canary=http://{dark.address}", "--regular-instances", "1")
    drive(proxy.url("/echo"), 200, method="POST")
    drive(proxy.url("/echo"), 100, method="GET")
    assert regular.stats()["by_method"] == {"POST": 200, "GET": 100}
    proxy.settled_metrics()
    assert dark.stats()["by_method"] == {"GET": 100}


def test_unreachable_upstream_is_502_and_counted(proxies, servers, closed_port):
    dark = servers()
    proxy = proxies("--upstream", f"http://127.0.0.1:{closed_port}",
                    "--dark", f"canary=http://{dark.address}")
    r = run_hammer(["load", "--hadoop-counters", "-", "-c", "4"], input_text=proxy.url("/x") + "\n" + proxy.url("/y") + "\n")
    assert r.error_counter("http_5xx") == 2
    m = proxy.metrics()
    assert m['hammer_dark_upstream_failures_total{type="connect"}'] == 2
    # The client's Host header never picks the upstream: there is no open relay.
    req = urllib.request.Request(proxy.url("/"), headers={"Host": "example.invalid"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 502


def test_request_size_limits(servers, proxies):
    regular = servers()
    proxy = proxies("--upstream", f"http://{regular.address}")
    req = urllib.request.Request(proxy.url("/"), headers={"X-Big": "a" * 70_000})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 431
    req = urllib.request.Request(proxy.url("/echo"), data=b"x" * (17 << 20), method="POST")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=30)
    assert e.value.code == 413
    assert regular.stats()["requests"] == 0


def users_through(proxy, requests=900, rate=300):
    """The users' side of a proxy: `hammer load` at a fixed rate; returns its summary."""
    r = run_hammer(["load", "-", "--loop", "--rate", str(rate), "-n", str(requests), "-c", "100",
                    "--emit", "none", "-q", "--summary-json", "/dev/stdout"],
                   input_text=proxy.url("/") + "\n")
    return json.loads(r.stdout)


@pytest.mark.parametrize("dark_kind", ["slow", "refusing"])
def test_dark_side_never_slows_the_user(servers, proxies, closed_port, dark_kind):
    """Users through a proxy with a slow (2 s) or refusing dark cluster get what users through
    a proxy without one get: every request answered by the regular instance, and never after
    waiting for the dark side (no user request takes as long as one dark answer). How much
    latency forking adds is measured by bench/dark_proxy.py, not asserted here."""
    dark_latency_ms = 2000
    regular = servers("--latency", "5ms")
    if dark_kind == "slow":
        dark_url = f"http://{servers('--latency', f'{dark_latency_ms}ms').address}"
    else:
        dark_url = f"http://127.0.0.1:{closed_port}"
    plain = proxies("--upstream", f"http://{regular.address}")
    forking = proxies("--upstream", f"http://{regular.address}", "--dark", f"canary={dark_url}",
                      "--regular-instances", "1", "--dark-multiplier", "canary=2",
                      "--dark-max-in-flight", "64", "--dark-timeout", "3s")
    baseline = users_through(plain)
    with_dark = users_through(forking)
    for s in (baseline, with_dark):
        assert (s["requests"], s["succeeded"], s["failed"]) == (900, 900, 0), s
    assert with_dark["latency"]["max_us"] < dark_latency_ms * 1000, with_dark["latency"]
    m = forking.settled_metrics()
    if dark_kind == "slow":
        # The budget bounded what was in flight: most copies were dropped and counted.
        assert m['hammer_dark_dropped_total{cluster="canary"}'] > 0
    else:
        assert m['hammer_dark_failed_total{cluster="canary",type="connect"}'] > 0
        assert m['hammer_dark_backed_off_total{cluster="canary"}'] > 0
    assert forking.rss_kib() < 200 * 1024


def test_comparison_reports_the_changed_field_and_cancels_noise(servers, proxies):
    primary, secondary = servers(), servers()
    dark = servers("--mutate", "price=0.1")
    proxy = proxies("--upstream", f"http://{primary.address}",
                    "--dark", f"canary=http://{dark.address}", "--regular-instances", "1",
                    "--compare", "--compare-secondary", f"http://{secondary.address}")
    lines = "".join(proxy.url(f"/json/{i % 10}") + "\n" for i in range(1000))
    r = run_hammer(["load", "-", "-c", "10", "--emit", "none", "-q"], input_text=lines)
    assert r.returncode == 0
    proxy.settled_metrics()
    # A comparison is reported once its secondary answer has arrived too: poll until every one
    # of the 1000 forked requests is either compared or counted as incomplete (a copy dropped or
    # timed out on a starved machine is incomplete by design, never a guess).
    endpoint = report_endpoint(proxy, "GET /json/{id}", 1000, timeout=30)
    total = endpoint["total"]
    assert total + endpoint["incomplete"] == 1000, endpoint
    assert total >= 900, endpoint
    assert endpoint["reported_fields"] == ["body.price"]
    fields = {f["path"]: f for f in endpoint["fields"]}
    assert fields["body.updated_at"]["noise"] > 0
    # --mutate price=0.1: about a tenth of the compared answers differ in price.
    assert 0.05 * total <= fields["body.price"]["raw"] <= 0.15 * total


def test_the_effective_rate_reads_the_copies_sent_however_often_metrics_is_read(
        servers, proxies):
    """Two scrapes a moment apart after the traffic both read the rate achieved (the window
    goes back about 10 s, to the start here), not 0 over the moment between them."""
    regular, canary = servers(), servers()
    proxy = proxies("--upstream", f"http://{regular.address}", "--dark",
                    f"c=http://{canary.address}")
    r = run_hammer(["load", "-q", "--no-table", "-d", "1s", "--rate", "200", proxy.url("/")])
    assert r.returncode == 0, r.stderr
    first, second = proxy.metrics(), proxy.metrics()
    assert first['hammer_dark_sent_total{cluster="c"}'] >= 100
    assert first['hammer_dark_effective_rate{cluster="c"}'] > 0
    assert second['hammer_dark_effective_rate{cluster="c"}'] > 0
