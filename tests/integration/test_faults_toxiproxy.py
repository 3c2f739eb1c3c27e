"""Network faults injected with Toxiproxy (toxiproxy.py) between hammer and its peers: `load`
and its target, `dark` and its clients, its regular upstream and its dark cluster, `bulk` and
an OpenSearch node. Each toxic is a fault real networks produce: latency with jitter, a
bandwidth limit, a reset (TCP RST), a timeout (data stops; with a time, the connection closes
after it), a slicer (data in small pieces, spaced), limit_data (the connection closes after N
bytes).

What is asserted is what users rely on: every request or document accounted for, with the
failure type the fault causes; timeouts firing at their configured values (±10 %); the dark
proxy's users unaffected by faults on the dark side (their p99 compared with a run without the
toxic in the same test, the margin half the delay the toxic would add if it leaked); bulk's
documents in the index exactly once or dead-lettered with a reason (the index's ids read back);
memory flat (peak RSS against a run without the toxic, or a run ten times shorter).

Targets are real: `hammer serve`, `hammer dark`, a one-node OpenSearch 2.19 (opensearch.py)
whose HTTP publish address is the toxiproxy port in front of it, so the batches bulk sends to
the node holding each primary cross the toxics.
"""
import json
import re
import socket
import subprocess
from collections import Counter

import pytest

import prerequisites
from harness import HAMMER, free_port, run_hammer
from opensearch import JAR, TOOL_DIR, OpenSearchCluster
from toxiproxy import Toxiproxy



@pytest.fixture(scope="module")
def toxi():
    server = Toxiproxy()
    yield server
    server.stop()


@pytest.fixture
def toxic_proxy(toxi):
    """toxic_proxy(upstream_port) -> a toxiproxy proxy in front of 127.0.0.1:upstream_port,
    deleted after the test."""
    made = []

    def make(upstream_port, listen_port=None):
        proxy = toxi.proxy(f"p{len(made)}-{upstream_port}", upstream_port,
                           listen_port=listen_port)
        made.append(proxy)
        return proxy

    yield make
    for proxy in made:
        proxy.delete()


def load(url, n, concurrency=10, timeout="5s", extra=()):
    """`hammer load` of n GETs of url; its --summary-json."""
    r = run_hammer(["load", "-", "-c", str(concurrency), "--timeout", timeout, "--emit", "none",
                    "-q", "--summary-json", "/dev/stdout", *extra], input_text=(url + "\n") * n)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def accounted(summary, n):
    assert summary["requests"] == n, summary
    assert summary["succeeded"] + summary["failed"] == n, summary
    assert sum(summary["failures"].values()) == summary["failed"], summary


def fired_at(summary, rounds, timeout_s):
    """Asserts a run whose every request waited `timeout_s` for a timeout, in `rounds` waves
    (requests / concurrency), lasted rounds * timeout_s, ±10 %."""
    expected = rounds * timeout_s
    print(f"  {rounds} waves of {timeout_s} s timeouts: the run lasted {summary['seconds']:.3f} s")
    assert abs(summary["seconds"] - expected) <= expected * 0.1, (summary["seconds"], expected)


def answer_bytes(server, path):
    """The length of server's whole answer (head and body) to an HTTP/1.1 GET of path."""
    with socket.create_connection((server.host, server.port), timeout=10) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: {server.address}\r\n\r\n".encode())
        data = b""
        while b"\r\n\r\n" not in data:
            data += s.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = int(re.search(rb"(?i)\r\ncontent-length: *(\d+)", head).group(1))
        while len(body) < length:
            body += s.recv(65536)
    return len(head) + 4 + length


def peak_rss_kib(args, input_text):
    """(exit code, stdout, stderr, peak RSS in KiB) of hammer ARGS under /usr/bin/time -v."""
    proc = subprocess.run(["/usr/bin/time", "-v", HAMMER, *args], input=input_text,
                          capture_output=True, text=True, timeout=120)
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    assert peak, proc.stderr
    return proc.returncode, proc.stdout, proc.stderr, int(peak.group(1))


# ---- hammer load ---------------------------------------------------------------------------


def test_load_latency_with_jitter(serve, toxic_proxy):
    proxy = toxic_proxy(serve.port)
    proxy.toxic("latency", latency=200, jitter=50)
    s = load(proxy.url("/"), 40)
    accounted(s, 40)
    print(f"load through latency 200±50 ms: {s['latency']}")
    # Every answer waited latency - jitter at least, and the jitter shows in the spread.
    assert s["failed"] == 0, s
    assert s["latency"]["min_us"] >= 150_000, s["latency"]
    assert s["latency"]["max_us"] - s["latency"]["min_us"] >= 20_000, s["latency"]
    proxy.clear()

    # Latency straddling --timeout: the answers slower than it are timeouts, no answer counted
    # as a success took longer than the timeout (+10 %), and nothing else failed.
    proxy.toxic("latency", latency=400, jitter=300)
    s = load(proxy.url("/"), 40, timeout="400ms")
    accounted(s, 40)
    print(f"load through latency 400±300 ms, --timeout 400ms: {s['succeeded']} succeeded "
          f"(max {s['latency']['max_us']} us), failures {s['failures']}")
    assert s["succeeded"] > 0 and s["failed"] > 0, s
    assert set(s["failures"]) == {"timeout"}, s
    assert s["latency"]["max_us"] <= 440_000, s["latency"]


def test_load_stalled_connection_times_out_at_the_configured_timeout(serve, toxic_proxy):
    proxy = toxic_proxy(serve.port)
    # timeout 0: no byte of any answer comes back and the connection stays open.
    proxy.toxic("timeout", timeout=0)
    s = load(proxy.url("/"), 20, concurrency=10, timeout="1s")
    accounted(s, 20)
    assert s["failures"] == {"timeout": 20}, s
    fired_at(s, 2, 1.0)
    proxy.clear()
    # timeout 300: toxiproxy closes the connection 300 ms in, before the 5 s timeout: a reset.
    proxy.toxic("timeout", timeout=300)
    s = load(proxy.url("/"), 20, concurrency=10, timeout="5s")
    accounted(s, 20)
    assert s["failures"] == {"reset": 20}, s
    assert s["seconds"] < 5, s


def test_load_resets_and_cut_answers_are_resets(serve, toxic_proxy):
    proxy = toxic_proxy(serve.port)
    cases = [
        ("reset_peer", "downstream", {"timeout": 0}, "/"),  # RST as the answer arrives
        ("reset_peer", "upstream", {"timeout": 100}, "/"),  # RST 100 ms after the request
        ("limit_data", "downstream", {"bytes": 500}, "/bytes/2000"),  # answer cut at 500 B
    ]
    for kind, stream, attributes, path in cases:
        proxy.toxic(kind, stream=stream, **attributes)
        s = load(proxy.url(path), 30)
        accounted(s, 30)
        assert s["failures"] == {"reset": 30}, (kind, stream, s)
        proxy.clear()

    # Kept-alive connections cut mid-answer: each carries two whole answers and 30 bytes of the
    # third, one request at a time. The cut request is a reset (its answer had begun: it is not
    # sent again), the others succeed.
    proxy.toxic("limit_data", bytes=2 * answer_bytes(serve, "/") + 30)
    s = load(proxy.url("/"), 30, concurrency=1)
    accounted(s, 30)
    assert (s["succeeded"], s["failures"]) == (20, {"reset": 10}), s
    assert s["connections_opened"] == 10, s


def test_load_slow_links_deliver_every_answer(serve, toxic_proxy):
    proxy = toxic_proxy(serve.port)
    # 20 kB at 100 KB/s: 200 ms an answer at least.
    proxy.toxic("bandwidth", rate=100)
    s = load(proxy.url("/bytes/20000"), 12, concurrency=4)
    accounted(s, 12)
    assert s["failed"] == 0, s
    assert s["latency"]["min_us"] >= 200_000 * 0.95, s["latency"]
    proxy.clear()
    # Requests and answers in pieces of 1-15 bytes, 100 µs apart.
    proxy.toxic("slicer", stream="upstream", average_size=8, size_variation=7, delay=100)
    proxy.toxic("slicer", stream="downstream", average_size=8, size_variation=7, delay=100)
    before = serve.stats()["requests"]
    s = load(proxy.url("/bytes/300"), 40)
    accounted(s, 40)
    assert s["failed"] == 0, s
    assert serve.stats()["requests"] - before == 40


def test_load_memory_is_flat_under_resets(serve, toxic_proxy):
    proxy = toxic_proxy(serve.port)
    proxy.toxic("reset_peer", timeout=0)
    peaks = {}
    for n in (300, 3000):
        code, out, _, peaks[n] = peak_rss_kib(
            ["load", "-", "-c", "20", "--emit", "none", "-q", "--summary-json", "/dev/stdout"],
            (proxy.url("/") + "\n") * n)
        assert code == 0
        s = json.loads(out)
        accounted(s, n)
        assert s["failures"] == {"reset": n}, s
    print(f"load peak RSS under resets: {peaks} KiB by request count")
    # Ten times the resets, about the same peak (a generous 8 MiB or a quarter more).
    assert peaks[3000] <= peaks[300] + max(8 * 1024, peaks[300] // 4), peaks


# ---- hammer dark ---------------------------------------------------------------------------


def dark_copies(metrics, cluster="canary"):
    """(selected, sent, succeeded, dropped + backed off, {failure type: n}) of a dark cluster."""
    label = f'cluster="{cluster}"'
    failed = {name.split('type="')[1][:-2]: v for name, v in metrics.items()
              if name.startswith(f"hammer_dark_failed_total{{{label},")}
    return (metrics[f"hammer_dark_selected_total{{{label}}}"],
            metrics[f"hammer_dark_sent_total{{{label}}}"],
            metrics[f"hammer_dark_succeeded_total{{{label}}}"],
            metrics[f"hammer_dark_dropped_total{{{label}}}"]
            + metrics[f"hammer_dark_backed_off_total{{{label}}}"], failed)


def upstream_failures(metrics):
    return {name.split('type="')[1][:-2]: v for name, v in metrics.items()
            if name.startswith("hammer_dark_upstream_failures_total{")}


def test_dark_client_side_faults(servers, proxies, toxic_proxy):
    """Toxiproxy between the users (`hammer load`) and the proxy."""
    regular, canary = servers("--threads", "1"), servers("--threads", "1")
    proxy = proxies("--upstream", f"http://{regular.address}", "--dark",
                    f"canary=http://{canary.address}", "--header-timeout", "1s")
    front = toxic_proxy(proxy.port)
    sent = 0

    def run(path, n, **kwargs):
        nonlocal sent
        sent += n
        s = load(front.url(path), n, **kwargs)
        accounted(s, n)
        return s

    # Slow, jittery and sliced links: every request answered, each copied once.
    front.toxic("latency", latency=200, jitter=50)
    s = run("/", 20)
    assert s["failed"] == 0 and s["latency"]["min_us"] >= 150_000, s
    front.clear()
    front.toxic("bandwidth", rate=100)
    s = run("/bytes/20000", 8, concurrency=4)
    assert s["failed"] == 0 and s["latency"]["min_us"] >= 190_000, s
    front.clear()
    # Requests reach the proxy 1-7 bytes at a time, 200 µs apart.
    front.toxic("slicer", stream="upstream", average_size=4, size_variation=3, delay=200)
    s = run("/bytes/100", 40)
    assert s["failed"] == 0, s
    front.clear()

    # Answers reset or cut on their way to the user: a reset for the user, and the proxy
    # answered every request it received (nothing left in flight, no connection kept).
    front.toxic("reset_peer", timeout=0)
    s = run("/", 30)
    assert s["failures"] == {"reset": 30}, s
    front.clear()
    front.toxic("limit_data", bytes=100)
    s = run("/bytes/3000", 30)
    assert s["failures"] == {"reset": 30}, s
    front.clear()

    # Answers that never come back: the user's --timeout fires at its value.
    front.toxic("timeout", timeout=0)
    s = run("/", 10, concurrency=10, timeout="1s")
    assert s["failures"] == {"timeout": 10}, s
    fired_at(s, 1, 1.0)
    front.clear()
    # Requests that never arrive: the proxy closes the connection at its --header-timeout,
    # without an answer (nothing was asked), and counts it.
    front.toxic("timeout", stream="upstream", timeout=0)
    s = load(front.url("/"), 10, concurrency=10, timeout="5s")
    accounted(s, 10)
    assert s["failures"] == {"reset": 10}, s
    fired_at(s, 1, 1.0)
    front.clear()
    # Request heads arriving a byte every 300 ms: begun, never complete within the
    # --header-timeout, so answered 408 at its value.
    front.toxic("slicer", stream="upstream", average_size=1, size_variation=0, delay=300_000)
    s = load(front.url("/"), 10, concurrency=10, timeout="5s")
    accounted(s, 10)
    assert s["failures"] == {"http_4xx": 10}, s
    fired_at(s, 1, 1.0)
    front.clear()
    m = proxy.metrics()
    assert m['hammer_dark_rejected_total{reason="header_timeout"}'] == 20, m

    m = proxy.settled_metrics()
    assert m["hammer_dark_requests_total"] == m["hammer_dark_responses_total"] == sent, m
    proxy.wait_for_metric("hammer_dark_connections_open", lambda v: v == 0)
    selected, copies, succeeded, not_sent, failed = dark_copies(m)
    assert selected == sent and copies + not_sent == selected, m
    assert succeeded == copies and not failed, m
    assert regular.stats()["requests"] == sent


def test_dark_upstream_side_faults(servers, proxies, toxic_proxy):
    """Toxiproxy between the proxy and its regular upstream."""
    regular, canary = servers("--threads", "1"), servers("--threads", "1")
    behind = toxic_proxy(regular.port)
    proxy = proxies("--upstream", f"http://{behind.address}", "--dark",
                    f"canary=http://{canary.address}", "--upstream-timeout", "1s",
                    "--eject-resets", "0")
    counted = Counter()

    def run(path, n, **kwargs):
        s = load(proxy.url(path), n, **kwargs)
        accounted(s, n)
        return s

    behind.toxic("latency", latency=200, jitter=50)
    s = run("/", 20)
    assert s["failed"] == 0 and s["latency"]["min_us"] >= 150_000, s
    behind.clear()
    behind.toxic("bandwidth", rate=100)
    s = run("/bytes/20000", 8, concurrency=4)
    assert s["failed"] == 0 and s["latency"]["min_us"] >= 190_000, s
    behind.clear()
    behind.toxic("slicer", average_size=4, size_variation=3, delay=100)
    s = run("/bytes/300", 20)
    assert s["failed"] == 0, s
    behind.clear()

    # The upstream's answer slower than --upstream-timeout, or never coming: a 504 to every
    # user at the timeout's value, counted as a regular-side timeout.
    for kind, attributes in (("latency", {"latency": 3000}), ("timeout", {"timeout": 0})):
        behind.toxic(kind, **attributes)
        s = run("/", 20, concurrency=10)
        assert s["failures"] == {"http_5xx": 20}, (kind, s)
        fired_at(s, 2, 1.0)
        counted["timeout"] += 20
        behind.clear()

    # The upstream's connection reset before it answers: a 502, counted as a reset.
    behind.toxic("reset_peer", timeout=0)
    s = run("/", 30)
    assert s["failures"] == {"http_5xx": 30}, s
    counted["reset"] += 30
    behind.clear()
    # The upstream's answer cut after its head and 30 bytes of body: a 502 when the proxy sees
    # the cut while it still holds the answer; a reset when the answer was already being
    # passed on (a body not whole by the end of a loop pass is streamed: the user got the head
    # and the connection is closed, as the upstream's was), counted as a stream aborted by
    # the upstream. Every one is a regular-side reset.
    aborted = proxy.metrics().get('hammer_dark_stream_aborted_total{by="upstream"}', 0)
    behind.toxic("limit_data", bytes=100)
    s = run("/bytes/3000", 30)
    assert set(s["failures"]) <= {"http_5xx", "reset"} and s["failed"] == 30, s
    counted["reset"] += 30
    behind.clear()
    m = proxy.metrics()
    assert (m.get('hammer_dark_stream_aborted_total{by="upstream"}', 0) - aborted ==
            s["failures"].get("reset", 0)), (m, s)

    m = proxy.settled_metrics()
    assert upstream_failures(m) == counted, m
    assert m["hammer_dark_requests_total"] == m["hammer_dark_responses_total"], m

    # Memory: flat over bursts of resets after the first (a generous 16 MiB of slack).
    behind.toxic("reset_peer", timeout=0)
    run("/", 500, concurrency=20)
    rss_before = proxy.rss_kib()
    for _ in range(4):
        s = run("/", 500, concurrency=20)
        assert s["failures"] == {"http_5xx": 500}, s
    rss_after = proxy.rss_kib()
    print(f"dark RSS over 2000 upstream resets: {rss_before} -> {rss_after} KiB")
    assert rss_after - rss_before < 16 * 1024, (rss_before, rss_after)


DARK_TIMEOUT_S = 2.0
# Each dark-side toxic; the failure type of every copy it touches (None: they succeed);
# `delay`: how long the toxic would hold a user's answer if the dark side leaked into it.
DARK_SIDE_TOXICS = [
    ("latency", {"latency": 1000, "jitter": 200}, "/", None, 0.8),
    # 4 kB at 1 KB/s: every copy ends at the dark timeout.
    ("bandwidth", {"rate": 1}, "/bytes/4000", "timeout", DARK_TIMEOUT_S),
    # 1 kB in pieces of 4-12 bytes 5 ms apart: 0.6 s at least.
    ("slicer", {"average_size": 8, "size_variation": 4, "delay": 5000}, "/bytes/1000", None,
     0.6),
    ("timeout", {"timeout": 0}, "/", "timeout", DARK_TIMEOUT_S),
    ("reset_peer", {"timeout": 1000}, "/", "reset", 1.0),  # an answer held 1 s, then a RST
    ("limit_data", {"bytes": 100}, "/bytes/3000", "reset", 0),
]


@pytest.mark.parametrize("kind,attributes,path,outcome,delay", DARK_SIDE_TOXICS,
                         ids=[t[0] for t in DARK_SIDE_TOXICS])
def test_dark_side_faults_never_reach_the_user(servers, proxies, toxic_proxy, kind, attributes,
                                               path, outcome, delay):
    """Toxiproxy between the proxy and its dark cluster."""
    regular, canary = servers("--threads", "1"), servers("--threads", "1")
    behind = toxic_proxy(canary.port)
    # Copies not meant to time out get a long dark timeout: 200 copies held by toxiproxy at
    # once on a busy 2-core machine can take twice the toxic's time.
    dark_timeout = DARK_TIMEOUT_S if outcome == "timeout" else 10
    proxy = proxies("--upstream", f"http://{regular.address}", "--dark",
                    f"canary=http://{behind.address}", "--dark-timeout",
                    f"{int(dark_timeout * 1000)}ms")
    n = 200
    load(proxy.url(path), 50)  # warm-up: connections open on every side
    proxy.settled_metrics()
    base = load(proxy.url(path), n)
    accounted(base, n)
    assert base["failed"] == 0, base
    before = dark_copies(proxy.settled_metrics())

    behind.toxic(kind, **attributes)
    s = load(proxy.url(path), n)
    in_flight_at_end = proxy.metrics()['hammer_dark_copies_in_flight{cluster="canary"}']
    m = proxy.settled_metrics(timeout=60)
    behind.clear()
    accounted(s, n)
    assert s["failed"] == 0, s
    print(f"dark side {kind}: user p99 {base['latency']['p99_us']} us without the toxic, "
          f"{s['latency']['p99_us']} us with it; copies in flight as the users finished: "
          f"{in_flight_at_end}")
    # The users' p99 is not moved by the toxic: a leak would add `delay` to it.
    if delay:
        assert s["latency"]["p99_us"] < base["latency"]["p99_us"] + delay * 1e6 / 2, (base, s)
        assert in_flight_at_end > 0, m  # the toxic did hold the copies

    # Every copy accounted for: sent ones succeeded or failed by the type the toxic causes.
    selected, sent, succeeded, not_sent, failed = (
        a - b if not isinstance(a, dict) else {k: v - b.get(k, 0) for k, v in a.items()}
        for a, b in zip(dark_copies(m), before))
    failed = {k: v for k, v in failed.items() if v}
    assert selected == n and sent + not_sent == selected, m
    assert sent == succeeded + sum(failed.values()) and sent > 0, m
    print(f"  copies: sent {sent}, succeeded {succeeded}, failed {failed}, not sent {not_sent}")
    if outcome is None:
        assert not failed, failed
    else:
        assert failed == {outcome: sent}, failed
    assert regular.stats()["requests"] == 50 + 2 * n


# ---- hammer bulk ---------------------------------------------------------------------------

DOCS = 400


class Search:
    """A one-node OpenSearch whose HTTP publish address is a toxiproxy proxy in front of its
    own HTTP port: `hammer bulk --cluster DIRECT` discovers the cluster directly and sends
    every batch to the published address, across the toxics."""

    def __init__(self, cluster, proxy, direct):
        self.cluster, self.proxy, self.direct = cluster, proxy, direct


@pytest.fixture(scope="module")
def search(toxi):
    """Search: the node, its toxiproxy proxy, and the URL of its own HTTP port."""
    prerequisites.require_built(TOOL_DIR, JAR, "opensearch")
    front, http = free_port(), free_port()
    cluster = OpenSearchCluster(nodes=1, heap="512m", cluster_name="hammer-toxi",
                                settings={"http.publish_port": front}, http_ports=[http])
    cluster.start(build_jar=False)
    try:
        proxy = toxi.proxy("opensearch", http, listen_port=front)
        yield Search(cluster, proxy, f"http://127.0.0.1:{http}")
        proxy.delete()
    finally:
        cluster.stop()


def documents(tag, with_ids=True):
    """DOCS action + source pairs; sources {"n": i}, ids TAG-i (or none)."""
    return "".join(('{"index":{"_id":"%s-%d"}}\n' % (tag, i) if with_ids else '{"index":{}}\n')
                   + '{"n":%d}\n' % i for i in range(DOCS))


def new_index(cluster, name):
    cluster.request("DELETE", f"/{name}")
    status, body = cluster.request("PUT", f"/{name}", {"settings": {
        "number_of_shards": 2, "number_of_replicas": 0}})
    assert status == 200, body
    status, body = cluster.request("GET", f"/_cluster/health/{name}?wait_for_status=green"
                                   "&timeout=60s")
    assert status == 200, body


def bulk(search, index, text, tmp_path, *extra, batch_docs=100, time_v=False):
    """Runs `hammer bulk` into index; (summary, dead letters, peak RSS KiB or None)."""
    summary_path, dead = tmp_path / f"{index}.json", tmp_path / f"{index}.dead.jsonl"
    args = ["bulk", "--cluster", search.direct, "--index", index, "--batch-docs",
            str(batch_docs), "--summary-json", str(summary_path), "--dead-letter", str(dead),
            "-q", *extra]
    if time_v:
        code, _, err, peak = peak_rss_kib(args, text)
    else:
        proc = subprocess.run([HAMMER, *args], input=text, capture_output=True, text=True,
                              timeout=120)
        code, err, peak = proc.returncode, proc.stderr, None
    assert code == 0, err
    summary = json.loads(summary_path.read_text())
    letters = [json.loads(line) for line in dead.read_text().splitlines()] \
        if dead.exists() else []
    # hammer's own accounting: every document read is indexed or dead-lettered, once.
    assert summary["documents_read"] == DOCS, summary
    assert summary["indexed"] + summary["dead_lettered"] == DOCS and summary["balanced"], summary
    assert len(letters) == summary["dead_lettered"], summary
    return summary, letters, peak


def in_index(cluster, index):
    """[(_id, n)] of every document in the index."""
    status, body = cluster.request("POST", f"/{index}/_refresh")
    assert status == 200, body
    status, body = cluster.request("GET", f"/{index}/_search?size={2 * DOCS}&_source=n")
    assert status == 200, body
    assert body["hits"]["total"]["value"] <= 2 * DOCS, body["hits"]["total"]
    return [(h["_id"], h["_source"]["n"]) for h in body["hits"]["hits"]]


def letter_n(letter):
    return letter["source"]["n"]


@pytest.mark.parametrize("kind,attributes", [
    ("latency", {"latency": 100, "jitter": 50}),
    ("bandwidth", {"rate": 50}),
    ("slicer", {"average_size": 64, "size_variation": 32, "delay": 200}),
], ids=["latency", "bandwidth", "slicer"])
def test_bulk_slow_links_index_every_document_once(search, tmp_path, kind, attributes):
    cluster, proxy = search.cluster, search.proxy
    index = f"toxi-slow-{kind}"
    new_index(cluster, index)
    for stream in ("upstream", "downstream"):
        proxy.toxic(kind, stream=stream, **attributes)
    try:
        summary, letters, _ = bulk(search, index, documents(kind), tmp_path, "--timeout", "30s")
    finally:
        proxy.clear()
    print(f"bulk through {kind}: {summary['requests']} requests, {summary['seconds']:.2f} s, "
          f"latency {summary['latency']}")
    assert (summary["indexed"], letters, summary["failures"]) == (DOCS, [], {}), summary
    if kind == "latency":  # each request and its answer waited latency - jitter at least
        assert summary["latency"]["min_us"] >= 2 * 50_000, summary["latency"]
    docs = in_index(cluster, index)
    assert sorted(docs) == sorted((f"{kind}-{i}", i) for i in range(DOCS))


def test_bulk_requests_that_never_arrive_whole_are_dead_lettered(search, tmp_path):
    """Connections reset as the request goes out, or closed after 2 kB of it: the node never
    gets those requests whole, so their documents are dead-lettered, with the transport failure
    as the reason, and are not in the index. Memory stays at a run without faults'."""
    cluster, proxy = search.cluster, search.proxy
    new_index(cluster, "toxi-baseline")
    summary, letters, baseline_peak = bulk(search, "toxi-baseline", documents("b"), tmp_path,
                                           time_v=True)
    assert (summary["indexed"], letters) == (DOCS, []), summary
    for kind, attributes, reason in (
            ("reset_peer", {"timeout": 0}, "transport failure: "),
            ("limit_data", {"bytes": 2000}, "transport failure: connection closed")):
        index = f"toxi-cut-{kind.replace('_', '-')}"
        new_index(cluster, index)
        proxy.toxic(kind, stream="upstream", **attributes)
        try:
            summary, letters, peak = bulk(search, index, documents(kind), tmp_path,
                                          "--max-retries", "2", "--retry-initial", "20ms",
                                          time_v=True)
        finally:
            proxy.clear()
        print(f"bulk through {kind} (upstream): {summary['requests']} requests, "
              f"failures {summary['failures']}, dead-lettered {summary['dead_lettered']}, "
              f"peak RSS {peak} KiB (without faults: {baseline_peak} KiB); "
              f"a reason: {letters[0]['reason'] if letters else None}")
        assert letters and set(summary["failures"]) == {"transport"}, summary
        for letter in letters:
            assert (letter["status"], letter["error_type"]) == (0, "retries_exhausted"), letter
            assert letter["reason"].startswith("retries exhausted after 2 retries; last: " +
                                               reason), letter
        # The index holds exactly the documents not dead-lettered (a request shorter than the
        # limit does arrive whole), each once.
        dead = {letter_n(l) for l in letters}
        assert len(dead) == len(letters)
        docs = in_index(cluster, index)
        assert sorted(n for _, n in docs) == sorted(set(range(DOCS)) - dead), docs
        assert summary["indexed"] == len(docs), summary
        assert peak <= baseline_peak + 16 * 1024, (peak, baseline_peak)


def test_bulk_lost_answers_never_duplicate(search, tmp_path):
    """Whole requests whose answers are cut (limit_data) or never come (timeout): the node
    indexed them, hammer cannot know. Documents without an _id are not sent again (a retry
    could index them twice): dead-lettered as outcome_unknown, each in the index exactly
    once. Documents with an _id are sent again (the same _id overwrites itself): each in the
    index once, and those still unanswered after the retries dead-lettered with the transport
    failure as the reason. --timeout fires at its value."""
    cluster, proxy = search.cluster, search.proxy
    cases = [
        ("limit_data", {"bytes": 150}, False, ()),
        ("limit_data", {"bytes": 150}, True, ("--max-retries", "2", "--retry-initial", "20ms")),
        ("timeout", {"timeout": 0}, False, ("--timeout", "5s")),
    ]
    for kind, attributes, with_ids, extra in cases:
        index = f"toxi-lost-{kind.replace('_', '-')}-{'ids' if with_ids else 'no-ids'}"
        new_index(cluster, index)
        proxy.toxic(kind, **attributes)
        try:
            summary, letters, _ = bulk(search, index, documents(index, with_ids), tmp_path,
                                       *extra, batch_docs=DOCS)
        finally:
            proxy.clear()
        docs = in_index(cluster, index)
        counts = Counter(n for _, n in docs)
        print(f"bulk, answers lost to {kind}, {'with' if with_ids else 'without'} ids: "
              f"{summary['requests']} requests in {summary['seconds']:.2f} s, indexed "
              f"{summary['indexed']}, dead-lettered {summary['dead_lettered']} "
              f"({Counter(l['error_type'] for l in letters)}); in the index: {len(docs)}, "
              f"most copies of one document: {max(counts.values()) if counts else 0}")
        # Every document in the index exactly once: the node got each whole request once.
        assert counts == Counter(range(DOCS)), counts
        assert sorted(letter_n(l) for l in letters) == list(range(DOCS))
        if not with_ids:
            assert summary["outcome_unknown"] == DOCS and summary["items_retried"] == 0, summary
            assert {l["error_type"] for l in letters} == {"outcome_unknown"}, letters[0]
        else:
            assert sorted(i for i, _ in docs) == sorted(f"{index}-{i}" for i in range(DOCS))
            assert summary["retries_exhausted"] == DOCS, summary
            for letter in letters:
                assert letter["reason"].startswith(
                    "retries exhausted after 2 retries; last: transport failure: "), letter
        if kind == "timeout":
            # One request (documents without _id or routing go to any shard, in one lane),
            # unanswered: the run lasted the --timeout, never less, and at most 10 % more
            # (the discovery, direct to the node, comes first and counts in that 10 %).
            assert summary["requests"] == 1, summary
            assert 5.0 <= summary["seconds"] <= 5.5, summary["seconds"]
