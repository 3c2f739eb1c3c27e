"""hammer load --metrics-listen: a real Prometheus server (Debian's `prometheus`) scrapes a run
every second, and PromQL through its HTTP API gives back the configured rate, a latency
quantile consistent with the summary's, the failures by type, and at the end exactly the
summary's request count."""
import json
import math
import signal
import subprocess
import urllib.request

import pytest

from harness import HAMMER, wait_for
from prometheus_server import Prometheus

RATE = 300  # requests per second in total, one third of them to /status/500


def scraping(target, tmp_path):
    """Prometheus scraping `target` (HOST:PORT) every second."""
    return Prometheus(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: hammer\n    scrape_interval: 1s\n"
        "    scrape_timeout: 900ms\n"
        f"    static_configs:\n      - targets: ['{target}']\n", tmp_path)


@pytest.fixture
def processes():
    """Processes this test started, stopped (by their own pid) whatever the outcome."""
    started = []
    yield started
    for p in reversed(started):
        if isinstance(p, Prometheus):
            p.stop()
        elif p.poll() is None:
            p.kill()
            p.wait()


def metrics_address(load):
    """The ADDR hammer load prints on stderr ("metrics at http://ADDR/metrics")."""
    line = load.stderr.readline()
    assert "metrics at http://" in line, line
    return line.split("http://", 1)[1].split("/", 1)[0]


def test_prometheus_scrapes_rate_quantile_and_failures(serve, tmp_path, processes):
    urls = tmp_path / "urls.txt"
    urls.write_text(f"{serve.url('/delay/5')}\n{serve.url('/')}\n{serve.url('/status/500')}\n")
    summary_path = tmp_path / "summary.json"
    load = subprocess.Popen(
        [HAMMER, "load", str(urls), "--loop", "-d", "20s", "--rate", str(RATE), "-c", "100",
         "-t", "1", "--emit", "none", "--metrics-listen", "127.0.0.1:0",
         "--metrics-linger", "10s", "--summary-json", str(summary_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    processes.append(load)
    target = metrics_address(load)
    with urllib.request.urlopen(f"http://{target}/metrics", timeout=5) as r:
        assert r.headers["Content-Type"] == "text/plain; version=0.0.4"
    prometheus = scraping(target, tmp_path)
    processes.append(prometheus)

    # Once Prometheus has scraped the run for 7 s (rate() over 5 s divides by the whole window,
    # so it must be covered by samples), the rates it computes must match what the run was told
    # to send.
    wait_for(lambda: (prometheus.scalar("count_over_time(hammer_load_elapsed_seconds[7s])")
                      or 0) >= 7, timeout=30, what="7 s of the run scraped")
    assert prometheus.scalar('up{job="hammer"}') == 1
    rate = prometheus.scalar("sum(rate(hammer_load_requests_total[5s]))")
    assert rate is not None and abs(rate - RATE) <= 0.2 * RATE, rate
    assert prometheus.scalar("hammer_load_target_rate") == RATE
    failures = prometheus.query('rate(hammer_load_requests_total{outcome!="success"}[5s])')
    assert [(m["key"], m["outcome"]) for m, _ in failures] == [
        (serve.url("/status/500"), "http_5xx")], failures
    assert abs(failures[0][1] - RATE / 3) <= 0.2 * RATE / 3, failures
    p99 = prometheus.scalar("histogram_quantile(0.99, "
                            "sum by (le) (rate(hammer_load_latency_seconds_bucket[5s])))")
    assert p99 is not None and p99 > 0, p99
    in_flight = prometheus.scalar("hammer_load_in_flight")
    assert in_flight is not None and 0 <= in_flight <= 100

    # After the run: the final figures stay served (--metrics-linger) and add up to the summary.
    wait_for(lambda: prometheus.scalar("hammer_load_running") == 0, timeout=30,
             what="the end of the run scraped")
    summary = json.loads(summary_path.read_text())
    assert prometheus.scalar("sum(hammer_load_requests_total)") == summary["requests"]
    assert prometheus.scalar('sum(hammer_load_requests_total{outcome="http_5xx"})') == \
        summary["failures"]["http_5xx"]
    assert prometheus.scalar("sum(hammer_load_latency_seconds_count)") == summary["succeeded"]
    # The live quantile is of the same order of magnitude as the run's p99 (µs in the summary;
    # Prometheus interpolates inside a bucket, 5-10 ms for the /delay/5 requests).
    summary_p99 = summary["latency"]["p99_us"] / 1e6
    assert abs(math.log10(p99 / summary_p99)) < 1, (p99, summary_p99)
    load.send_signal(signal.SIGTERM)  # ends the linger
    load.wait(timeout=30)
    print(f"configured {RATE} req/s, Prometheus rate {rate:.1f}, 5xx rate {failures[0][1]:.1f}; "
          f"histogram_quantile p99 {p99 * 1e3:.2f} ms, summary p99 {summary_p99 * 1e3:.2f} ms")


def test_metrics_listen_usage_errors(serve):
    for args, message in (
            (["--metrics-listen", "nowhere"], "--metrics-listen: expected IP:PORT"),
            (["--metrics-linger", "5s"], "--metrics-linger needs --metrics-listen"),
            (["--metrics-listen", "127.0.0.1:0", "--metrics-linger", "x"], "--metrics-linger")):
        r = subprocess.run([HAMMER, "load", serve.url("/"), "-n", "1", *args],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 2, (args, r.stderr)
        assert message in r.stderr, (args, r.stderr)
