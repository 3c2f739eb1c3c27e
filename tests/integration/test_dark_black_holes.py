"""`hammer dark` when what stands behind it never answers.

The black holes are hand-made doubles (harness.BlackHole), because no real server produces these
faults on cue: "unanswered" accepts every connection and never writes a byte; "unaccepted"
listens with a full accept queue, so a connect never completes. Regular instances are real
`hammer serve` processes, and `hammer load` plays the users.

  a black-holed regular upstream: --upstream-timeout gives the user a 504, --connect-timeout
      a 502, each counted by type in /metrics;
  a black-holed dark cluster: --dark-timeout and --connect-timeout end the copies, the in-flight
      budget drops the excess, every copy is counted by outcome and type, the users get exactly
      what they get through a proxy without a dark cluster, and the proxy's memory stays flat
      over repeated bursts.
"""
import json
import urllib.error
import urllib.request

import pytest

from dark_support import drive
from harness import BlackHole, run_hammer, url_lines

BURST = 1000  # requests per burst through a proxy


def user_status(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as reply:
            return reply.status
    except urllib.error.HTTPError as e:
        return e.code


def test_unanswering_upstream_is_a_504_after_the_upstream_timeout(proxies):
    with BlackHole("unanswered") as hole:
        proxy = proxies("--upstream", hole.url(), "--upstream-timeout", "300ms")
        assert user_status(proxy.url("/first")) == 504
        r = run_hammer(["load", "-", "-c", "4", "--timeout", "30s", "--emit", "none", "-q",
                        "--summary-json", "/dev/stdout"],
                       input_text=url_lines(proxy.url("/x"), proxy.url("/y"), proxy.url("/z")))
        summary = json.loads(r.stdout)
        assert (summary["succeeded"], summary["failures"]) == (0, {"http_5xx": 3}), summary
        m = proxy.metrics()
        assert m['hammer_dark_upstream_failures_total{type="timeout"}'] == 4
        assert m["hammer_dark_responses_total"] == m["hammer_dark_requests_total"] == 4
        assert hole.accepted >= 1  # the proxy did connect: the timeout is the response's


def test_unaccepting_upstream_is_a_502_after_the_connect_timeout(proxies):
    with BlackHole("unaccepted") as hole:
        proxy = proxies("--upstream", hole.url(), "--connect-timeout", "300ms",
                        "--upstream-timeout", "30s")
        assert user_status(proxy.url("/first")) == 502
        assert user_status(proxy.url("/second")) == 502
        m = proxy.metrics()
        assert m['hammer_dark_upstream_failures_total{type="connect"}'] == 2
        assert 'hammer_dark_upstream_failures_total{type="timeout"}' not in m


@pytest.mark.parametrize("kind", ["unanswered", "unaccepted"])
def test_black_holed_dark_cluster_never_reaches_the_user(servers, proxies, kind):
    regular = servers("--threads", "2")
    with BlackHole(kind) as hole:
        plain = proxies("--upstream", f"http://{regular.address}")
        forking = proxies("--upstream", f"http://{regular.address}", "--dark",
                          f"canary={hole.url()}", "--regular-instances", "1",
                          "--dark-multiplier", "canary=1", "--dark-timeout", "300ms",
                          "--connect-timeout", "200ms", "--dark-max-in-flight", "16")
        # What the users get is the same with and without the dark cluster: every request
        # answered 200 by the regular instance.
        baseline = drive(plain.url("/"), BURST)
        first = drive(forking.url("/"), BURST)
        assert (baseline["succeeded"], baseline["failed"]) == (BURST, 0), baseline
        assert (first["succeeded"], first["failed"]) == (BURST, 0), first
        forking.settled_metrics()
        rss_before = forking.rss_kib()
        for _ in range(4):
            burst = drive(forking.url("/"), BURST)
            assert (burst["succeeded"], burst["failed"]) == (BURST, 0), burst
        m = forking.settled_metrics()
        rss_after = forking.rss_kib()
        assert regular.stats()["requests"] == 6 * BURST
        # Copies: every one the strategy selected was sent, dropped (budget full) or backed
        # off; every one sent failed, by the type the black hole causes.
        label = 'cluster="canary"'
        selected = m[f"hammer_dark_selected_total{{{label}}}"]
        sent = m[f"hammer_dark_sent_total{{{label}}}"]
        dropped = m[f"hammer_dark_dropped_total{{{label}}}"]
        backed_off = m[f"hammer_dark_backed_off_total{{{label}}}"]
        failed = {name.split('type="')[1][:-2]: v for name, v in m.items()
                  if name.startswith(f"hammer_dark_failed_total{{{label},")}
        assert selected == 5 * BURST, m
        assert sent + dropped + backed_off == selected, m
        assert m[f"hammer_dark_succeeded_total{{{label}}}"] == 0
        assert sum(failed.values()) == sent > 0, failed
        if kind == "unanswered":
            assert failed == {"timeout": sent}, failed  # --dark-timeout fired
            assert dropped > 0, m  # copies waiting for the timeout filled the budget
            assert hole.accepted > 0
        else:
            assert failed == {"connect": sent}, failed  # --connect-timeout fired
            assert backed_off > 0, m  # a cluster failing to connect is backed off
        # Memory: flat over four bursts after the first (a generous 16 MiB of slack).
        assert rss_after - rss_before < 16 * 1024, (rss_before, rss_after)
