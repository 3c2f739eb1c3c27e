"""`hammer dark` keeps users served when regular instances fail (issue 46, items 1 and 3):
three `hammer serve` instances behind the proxy, one of them killed (SIGKILL), refusing
connections, or answering 500 to everything. What users see is counted from `hammer load`'s
summary (every request accounted for), what the proxy did from its /metrics: instances ejected
after consecutive failures, requests that never reached an instance retried on another one.
"""
import json
import signal

from harness import run_hammer


def load_through(proxy, tmp_path, n, *extra, method=None):
    """n requests through the proxy, 8 at a time; the summary of what the user saw."""
    url = proxy.url("/user")
    line = f"{method} {url}" if method else url
    summary = tmp_path / "summary.json"
    r = run_hammer(["load", "-", "-c", "8", "--summary-json", str(summary), "-q", *extra],
                   input_text=(line + "\n") * n, timeout=120)
    assert summary.exists(), r.stderr
    return json.loads(summary.read_text())


def failures(summary):
    return {k: v for k, v in (summary.get("failures") or {}).items() if v}


def three_behind_dark(servers, proxies, *extra, dead=None):
    instances = [servers() for _ in range(3)]
    urls = [f"http://{s.address}" for s in instances]
    if dead is not None:
        urls[1] = f"http://127.0.0.1:{dead}"
    proxy = proxies("--upstream", ",".join(urls), "--regular-instances", "3", *extra)
    return instances, proxy


def test_a_killed_instance_costs_users_nothing(servers, proxies, tmp_path):
    instances, proxy = three_behind_dark(servers, proxies)
    warm = load_through(proxy, tmp_path, 90)
    assert warm["requests"] == 90 and not failures(warm), warm
    victim = instances[1]
    victim.proc.send_signal(signal.SIGKILL)
    victim.proc.wait(timeout=10)
    after = load_through(proxy, tmp_path, 600)
    assert after["requests"] == 600
    assert not failures(after), after  # each try that found it dead went to another one
    m = proxy.metrics()
    assert m["hammer_dark_upstream_ejections_total"] >= 1, m
    assert m["hammer_dark_retries_total"] >= 1, m
    # Retried tries only: ejection keeps the dead instance's share from costing a try each.
    assert m["hammer_dark_retries_total"] <= 10, m
    assert m.get('hammer_dark_upstream_failures_total{type="connect"}', 0) == 0, m


def test_posts_that_never_reached_a_refusing_instance_are_retried(servers, proxies, tmp_path,
                                                                  closed_port):
    _, proxy = three_behind_dark(servers, proxies, "--eject-connect-failures", "0",
                                 dead=closed_port)
    summary = load_through(proxy, tmp_path, 300, method="POST")
    assert summary["requests"] == 300
    m = proxy.metrics()
    assert m["hammer_dark_upstream_ejections_total"] == 0  # ejection off: every retry shows
    # Least-request over two random draws sends about a third of the tries to it; each is
    # retried, unless the budget (3 retries in flight at 8 requests in flight) is full, and
    # only those reach the user, as a 502.
    over_budget = m["hammer_dark_retries_over_budget_total"]
    assert failures(summary) == ({"http_5xx": over_budget} if over_budget else {}), (summary, m)
    assert over_budget <= 30, m
    assert 50 <= m["hammer_dark_retries_total"] <= 200, m
    assert m['hammer_dark_upstream_failures_total{type="connect"}'] == over_budget, m
    outstanding = {k: v for k, v in m.items() if k.startswith("hammer_dark_upstream_outstanding")}
    assert len(outstanding) == 3 and set(outstanding.values()) == {0}, outstanding
    assert any(f":{closed_port}" in k for k in outstanding), outstanding


def test_an_instance_answering_500_is_ejected_and_its_share_moves(servers, proxies, tmp_path):
    healthy = [servers(), servers()]
    failing = servers("--error-rate", "1")
    proxy = proxies("--upstream", ",".join(f"http://{s.address}" for s in
                                           (healthy[0], failing, healthy[1])),
                    "--regular-instances", "3", "--eject-5xx", "5", "--ejection-time", "60s")
    summary = load_through(proxy, tmp_path, 600)
    assert summary["requests"] == 600
    # A 5xx answer reached the user (it is an answer, never retried) until the fifth in a row.
    fivexx = failures(summary).get("http_5xx", 0)
    assert 5 <= fivexx <= 5 + 8, summary  # at most the 8 in flight when it was ejected
    m = proxy.metrics()
    assert m["hammer_dark_upstream_ejections_total"] == 1
    assert m["hammer_dark_upstream_ejected"] == 1
    assert m["hammer_dark_retries_total"] == 0


def test_with_every_instance_refusing_users_get_a_fast_502_and_no_retry_storm(
        proxies, tmp_path, closed_port):
    urls = ",".join([f"http://127.0.0.1:{closed_port}"] * 3)
    proxy = proxies("--upstream", urls, "--regular-instances", "3")
    summary = load_through(proxy, tmp_path, 200)
    assert summary["requests"] == 200
    assert failures(summary) == {"http_5xx": 200}, summary
    m = proxy.metrics()
    # At most --retries (2) more tries a request, and the budget caps those in flight.
    assert m['hammer_dark_upstream_failures_total{type="connect"}'] == 200
    assert m["hammer_dark_retries_total"] <= 2 * 200
