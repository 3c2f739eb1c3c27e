"""`hammer dark --dark-http2 NAME`: copies to a dark cluster over HTTP/2 (issue 15, item 3), and
`--compare-secondary` over HTTP/2 with `--upstream-http2`. Real HTTP/2 servers as the dark
instances: `hammer serve` (h2c prior knowledge; it counts what it received by protocol) and
nginx 1.22 with `listen ... ssl http2` (ALPN h2; its access log records `$server_protocol`).

Copies keep what they have over HTTP/1.1: exact counts, the in-flight budget and the dark
timeout, constant-qps, comparison, answers discarded as they arrive; an instance that does not
speak HTTP/2 fails the copies, counted, and never the primaries. What the proxy decided is read
from its /metrics once every copy has ended (DarkProxy.settled_metrics).
"""
import json
import ssl
import uuid

from dark_support import drive, report_endpoint
from harness import free_port, memory_kib, run_hammer, wait_for
from logged_nginx import AccessLog
from zookeeper import zk  # noqa: F401

# What nginx logs of each request: the URI (AccessLog needs "u"), the protocol it was spoken
# in, and the proxy's X-Hammer-Dark header (empty on a regular request).
H2_LOG_FORMAT = ("log_format h2_protocol escape=json "
                 "'{\"u\":\"$request_uri\",\"p\":\"$server_protocol\","
                 "\"d\":\"$http_x_hammer_dark\"}';")


class Http2Nginx:
    """nginx with the test CA's localhost/127.0.0.1 certificate and `http2` on a TLS port (ALPN
    h2 or http/1.1, as the client offers), logging every request's protocol there."""

    def __init__(self, start_nginx, pki, tmp_path):
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.log = AccessLog(tmp_path / "h2-access.log", marker_url=f"https://{self.address}/",
                             ssl_context=ssl.create_default_context(cafile=str(pki.ca)))
        self.nginx = start_nginx(http_extra=H2_LOG_FORMAT, server_extra=f"""
    listen {self.address} ssl http2;
    ssl_certificate {pki.server_cert};
    ssl_certificate_key {pki.server_key};
    access_log {self.log.path} h2_protocol;""")

    def protocols(self, dark=""):
        """{protocol: requests} nginx logged with X-Hammer-Dark `dark` ("" for regular)."""
        counts = {}
        for entry in self.log.entries():
            if entry["d"] == dark:
                counts[entry["p"]] = counts.get(entry["p"], 0) + 1
        return counts


def cluster_metric(metrics, name, cluster, **labels):
    inner = ",".join([f'cluster="{cluster}"'] + [f'{k}="{v}"' for k, v in labels.items()])
    return metrics.get(f"hammer_dark_{name}{{{inner}}}", 0)


def test_copies_go_over_h2c_to_the_named_cluster_only_with_exact_counts(servers, proxies):
    regular, h2, h11 = servers(), servers(), servers()
    proxy = proxies("--upstream", f"http://{regular.address}", "--regular-instances", "1",
                    "--dark", f"h2=http://{h2.address}", "--dark", f"h11=http://{h11.address}",
                    "--dark-http2", "h2", "--threads", "2")
    n = 400
    summary = drive(proxy.url("/json/1"), n)
    assert summary["succeeded"] == n
    m = proxy.settled_metrics()
    # Ns = Nd = 1, multiplier 1: every request copied once to each cluster, none dropped.
    for cluster in ("h2", "h11"):
        assert cluster_metric(m, "sent_total", cluster) == n, cluster
        assert cluster_metric(m, "succeeded_total", cluster) == n, cluster
        assert cluster_metric(m, "dropped_total", cluster) == 0, cluster
    assert h2.stats()["by_protocol"] == {"HTTP/1.1": 0, "HTTP/2": n}
    assert h2.stats()["by_header"]["X-Hammer-Dark"] == n
    assert h11.stats()["by_protocol"] == {"HTTP/1.1": n, "HTTP/2": 0}
    assert regular.stats()["by_protocol"] == {"HTTP/1.1": n, "HTTP/2": 0}
    view = json.loads(proxy.get_admin("/hammer/dark/membership"))
    assert {c["name"]: c["protocol"] for c in view["dark"]} == {"h2": "HTTP/2",
                                                                 "h11": "HTTP/1.1"}


def test_copies_go_over_alpn_h2_to_nginx_http2_over_tls(servers, proxies, start_nginx, pki,
                                                         tmp_path):
    nginx = Http2Nginx(start_nginx, pki, tmp_path)
    regular = servers()
    proxy = proxies("--upstream", f"http://{regular.address}", "--regular-instances", "1",
                    "--dark", f"canary=https://{nginx.address}", "--dark-http2", "canary",
                    "--cacert", str(pki.ca))
    n = 200
    assert drive(proxy.url("/x"), n)["succeeded"] == n
    m = proxy.settled_metrics()
    assert cluster_metric(m, "succeeded_total", "canary") == n
    assert nginx.protocols(dark="canary") == {"HTTP/2.0": n}
    assert nginx.protocols(dark="") == {}  # the regular side is hammer serve


def test_upstream_http2_to_nginx_http2_over_tls(proxies, start_nginx, pki, tmp_path):
    nginx = Http2Nginx(start_nginx, pki, tmp_path)
    proxy = proxies("--upstream-http2", "--upstream", f"https://{nginx.address}",
                    "--cacert", str(pki.ca))
    n = 200
    summary = drive(proxy.url("/x"), n)
    assert summary["succeeded"] == n
    assert nginx.protocols() == {"HTTP/2.0": n}


def test_an_http11_only_instance_fails_the_copies_and_never_the_primaries(servers, proxies):
    regular, http11_only = servers(), servers("--no-http2")
    proxy = proxies("--upstream", f"http://{regular.address}", "--regular-instances", "1",
                    "--dark", f"canary=http://{http11_only.address}", "--dark-http2", "canary")
    n = 100
    summary = drive(proxy.url("/"), n, concurrency=10)
    assert summary["succeeded"] == n
    m = proxy.settled_metrics()
    # No fallback: each copy is a protocol failure of the cluster, as a refused one is counted.
    assert cluster_metric(m, "sent_total", "canary") == n
    assert cluster_metric(m, "failed_total", "canary", type="protocol") == n
    assert cluster_metric(m, "succeeded_total", "canary") == 0
    assert http11_only.stats()["by_protocol"]["HTTP/2"] == 0
    assert regular.stats()["requests"] == n
    proxy.stop()
    assert f"dark cluster canary: copies sent {n}, succeeded 0, failed {n}," in proxy.stderr


def test_a_slow_http2_instance_is_bounded_by_the_budget_and_the_dark_timeout(servers, proxies):
    regular, slow = servers(), servers("--latency", "3s")
    proxy = proxies("--upstream", f"http://{regular.address}", "--regular-instances", "1",
                    "--dark", f"canary=http://{slow.address}", "--dark-http2", "canary",
                    "--dark-max-in-flight", "4", "--dark-timeout", "200ms")
    n = 300
    summary = drive(proxy.url("/"), n, concurrency=10)
    assert summary["succeeded"] == n  # the primaries never wait for the copies
    m = proxy.settled_metrics()
    sent = cluster_metric(m, "sent_total", "canary")
    dropped = cluster_metric(m, "dropped_total", "canary")
    # Every copy is sent or dropped (never queued); each one sent timed out and was counted.
    assert sent + dropped == n
    assert dropped > 0
    assert cluster_metric(m, "failed_total", "canary", type="timeout") == sent
    assert slow.stats()["by_protocol"]["HTTP/1.1"] == 0


def test_constant_qps_copies_go_over_http2(servers, proxies):
    regular, dark = servers(), servers()
    proxy = proxies("--upstream", f"http://{regular.address}", "--regular-instances", "1",
                    "--dark", f"canary=http://{dark.address}", "--dark-http2", "canary",
                    "--dark-strategy", "canary=constant-qps", "--dark-rate", "canary=50")
    drive(proxy.url("/json/2"), 200)
    # The schedule sends from the kept requests at its own pace: wait for a few answers.
    proxy.wait_for_metric('hammer_dark_succeeded_total{cluster="canary"}', lambda v: v >= 5)
    proxy.stop()  # the schedule stops; every copy it sent has an outcome in the summary
    sent = int(proxy.stderr.split("dark cluster canary: copies sent ", 1)[1].split(",")[0])
    assert sent >= 5
    stats = dark.stats()
    assert stats["by_protocol"]["HTTP/1.1"] == 0
    assert 5 <= stats["by_protocol"]["HTTP/2"] <= sent


def compared(proxy, n):
    """Drives n requests over /json/{0..9} through the proxy; returns the endpoint's report
    once every request is recorded (compared, or counted incomplete)."""
    lines = "".join(proxy.url(f"/json/{i % 10}") + "\n" for i in range(n))
    r = run_hammer(["load", "-", "-c", "4", "--emit", "none", "-q"], input_text=lines)
    assert r.returncode == 0, r.stderr
    proxy.settled_metrics()
    endpoint = report_endpoint(proxy, "GET /json/{id}", n)
    assert endpoint["total"] + endpoint["incomplete"] == n, endpoint
    assert endpoint["total"] >= n * 9 // 10, endpoint
    return endpoint


def test_compare_joins_http2_dark_answers_with_the_primary(servers, proxies):
    """Every /json answer carries its own updated_at: the secondary's answers cancel that noise,
    so only the canary's changed price is reported."""
    primary, secondary = servers(), servers()
    dark = servers("--mutate", "price=0.1")
    proxy = proxies("--upstream", f"http://{primary.address}", "--regular-instances", "1",
                    "--compare-secondary", f"http://{secondary.address}",
                    "--dark", f"canary=http://{dark.address}", "--dark-http2", "canary",
                    "--compare")
    n = 300
    assert compared(proxy, n)["reported_fields"] == ["body.price"]
    assert dark.stats()["by_protocol"] == {"HTTP/1.1": 0, "HTTP/2": n}
    # The secondary is a regular instance: HTTP/1.1 like the upstreams here.
    for side in (primary, secondary):
        assert side.stats()["by_protocol"] == {"HTTP/1.1": n, "HTTP/2": 0}


def test_a_huge_http2_dark_answer_is_discarded_as_it_arrives(servers, proxies):
    regular, dark = servers(), servers()
    proxy = proxies("--upstream", f"http://{regular.address}", "--regular-instances", "1",
                    "--dark", f"canary=http://{dark.address}", "--dark-http2", "canary",
                    "--compare", "--dark-timeout", "120s")
    size = 96 << 20
    baseline = memory_kib(proxy.proc.pid, "VmRSS")
    summary = drive(proxy.url(f"/bytes/{size}"), 1, concurrency=1)
    assert summary["succeeded"] == 1
    m = proxy.settled_metrics()
    assert cluster_metric(m, "succeeded_total", "canary") == 1
    peak = memory_kib(proxy.proc.pid, "VmHWM")
    # The client's answer is streamed (over --stream-threshold) and the copy's read and dropped
    # beyond the 1 MiB kept for comparison: neither is held whole.
    print(f"proxy memory for a {size >> 20} MiB HTTP/2 dark answer: +{peak - baseline} KiB")
    assert peak - baseline <= 16 * 1024, (baseline, peak)
    assert dark.stats()["by_protocol"] == {"HTTP/1.1": 0, "HTTP/2": 1}


def test_a_zookeeper_cluster_named_before_it_appears_speaks_http2(zk, servers, proxies):
    root = f"/hammer-{uuid.uuid4().hex[:8]}"
    zk.create(f"{root}/config", json.dumps({"regular": "web", "dark": {}}))
    regular = servers()
    proxy = proxies("--upstream", f"http://{regular.address}", "--membership", zk.url(root),
                    "--regular-cluster", "web", "--dark-http2", "canary")
    dark = servers("--announce", zk.url(f"{root}/clusters/canary"))
    zk.set(f"{root}/config", json.dumps({"regular": "web", "dark": {"canary": {}}}))
    view = wait_for(lambda: (m := json.loads(proxy.get_admin("/hammer/dark/membership")))[
        "dark"] and m["dark"][0]["instances"] == 1 and m)
    assert view["dark"][0]["protocol"] == "HTTP/2"
    n = 200
    assert drive(proxy.url("/"), n)["succeeded"] == n
    m = proxy.settled_metrics()
    # Ns = 1 (this proxy), Nd = 1: every request copied, over HTTP/2.
    assert cluster_metric(m, "succeeded_total", "canary") == n
    assert dark.stats()["by_protocol"] == {"HTTP/1.1": 0, "HTTP/2": n}
    proxy.stop()
    assert "--dark-http2 canary: the ZooKeeper config names no dark cluster 'canary' yet" in \
        proxy.stderr
