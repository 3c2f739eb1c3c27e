"""`hammer load` against real servers on loopback: exact accounting of every request."""
import collections
import json
import re
import subprocess

from harness import HAMMER, ROOT, run_hammer, summary_of, url_lines

SEED_REDUCER = ROOT / "tests" / "fixtures" / "seed" / "stats_aggregator.rb"


def weighted_list(base_urls):
    """A URL list where repetition is weight, as the seed built it, plus noise to skip."""
    lines = ["# weighted list", ""]
    expected = collections.Counter()
    for url, weight in base_urls:
        for _ in range(weight):
            lines.append(url)
            expected[url] += 1
    return "\n".join(lines) + "\n", expected


def records_by_key(records):
    ok, failed = collections.Counter(), collections.Counter()
    for record in records:
        key, _, value = record.partition("\t")
        if value:
            assert re.fullmatch(r"\d+\.\d{6}", value), record
            ok[key] += 1
        else:
            failed[key] += 1
    return ok, failed


def test_exact_records_and_counters_against_hammer_serve(serve, closed_port):
    dead = f"http://127.0.0.1:{closed_port}/"
    text, expected = weighted_list([
        (serve.url("/"), 30),
        (serve.url("/bytes/4096"), 10),
        (serve.url("/status/500"), 7),
        (serve.url("/status/404"), 5),
        (serve.url("/error-content"), 4),
        (dead, 3),
        ("gopher://127.0.0.1/x", 2),
    ])
    r = run_hammer(["load", "--hadoop-counters", "-", "-c", "8"], input_text=text)
    assert r.returncode == 0, r.stderr
    assert len(r.records) == sum(expected.values())
    ok, failed = records_by_key(r.records)
    assert ok == collections.Counter({serve.url("/"): 30, serve.url("/bytes/4096"): 10})
    assert failed == collections.Counter({
        serve.url("/status/500"): 7, serve.url("/status/404"): 5,
        serve.url("/error-content"): 4, dead: 3, "gopher://127.0.0.1/x": 2})
    assert r.error_counter("http_5xx") == 7
    assert r.error_counter("http_4xx") == 5
    assert r.error_counter("errorlike_content") == 4
    assert r.error_counter("connect") == 3
    assert r.error_counter("invalid_url") == 2
    assert "61 requests sent = 40 succeeded + 21 failed" in r.stderr
    assert any(line.startswith("reporter:status:") for line in r.stderr.splitlines())
    # The server saw every request that was sent to it, and nothing else.
    assert serve.stats()["requests"] == 30 + 10 + 7 + 5 + 4


def test_exact_records_against_nginx(nginx):
    text, expected = weighted_list([
        (nginx.url("/"), 50),
        (nginx.url("/status/500"), 6),
        (nginx.url("/status/404"), 4),
        (nginx.url("/error-content"), 3),
    ])
    r = run_hammer(["load", "--hadoop-counters", "-", "-c", "20", "-t", "2"], input_text=text)
    assert r.returncode == 0, r.stderr
    ok, failed = records_by_key(r.records)
    assert ok == collections.Counter({nginx.url("/"): 50})
    assert failed == collections.Counter({nginx.url("/status/500"): 6,
                                          nginx.url("/status/404"): 4,
                                          nginx.url("/error-content"): 3})
    assert r.error_counter("http_5xx") == 6
    assert r.error_counter("http_4xx") == 4
    assert r.error_counter("errorlike_content") == 3


def test_seed_reducer_reads_hammer_records(serve):
    text, expected = weighted_list([
        (serve.url("/"), 25), (serve.url("/delay/2"), 5), (serve.url("/status/503"), 4),
        (serve.url("/error-content"), 2)])
    r = run_hammer(["load", "-", "-c", "10"], input_text=text)
    assert r.returncode == 0, r.stderr
    sorted_records = "".join(sorted(line + "\n" for line in r.records))
    seed = subprocess.run(["ruby", str(SEED_REDUCER), "--reducer"], input=sorted_records,
                          capture_output=True, text=True, check=True)
    rows = {}
    for line in seed.stdout.splitlines():
        key, _sum, _avg, _max, _min, errors, count = line.split("\t")
        rows[key] = (int(count), int(errors))
    assert rows == {serve.url("/"): (25, 0), serve.url("/delay/2"): (5, 0),
                    serve.url("/status/503"): (0, 4), serve.url("/error-content"): (0, 2)}


def test_hadoop_offset_prefix_and_methods(serve):
    text = (f"0\t{serve.url('/echo')}\n"
            f"57\tPOST {serve.url('/echo')}\n"
            f"HEAD {serve.url('/')}\n")
    r = run_hammer(["load", "-", "-c", "1"], input_text=text)
    assert r.returncode == 0, r.stderr
    assert len(r.successes()) == 3
    assert serve.stats()["by_method"] == {"GET": 1, "POST": 1, "HEAD": 1}


def test_bad_input_is_counted_not_fatal(serve, tmp_path):
    huge = "http://127.0.0.1/" + "a" * (1 << 20)
    garbage = bytes(range(1, 256)).replace(b"\n", b"").replace(b"\r", b"")
    path = tmp_path / "bad.txt"
    path.write_bytes(b"\n".join([
        huge.encode(), garbage, b"ftp://127.0.0.1/file", serve.url("/").encode(),
        serve.url("/fault/endless-header").encode(), serve.url("/fault/reset-mid-body").encode(),
    ]) + b"\n")
    r = run_hammer(["load", "--hadoop-counters", str(path), "-c", "2", "--timeout", "5s"])
    assert r.returncode == 0, r.stderr
    assert len(r.records) == 6
    assert r.error_counter("invalid_url") == 3
    assert r.error_counter("protocol") == 1
    assert r.error_counter("reset") == 1
    assert len(r.successes()) == 1
    # Keys stay bounded and printable even for a 1 MiB or binary line.
    assert all(len(rec) < 2000 for rec in r.records)


def test_usage_errors_exit_2_with_the_flag_named(serve):
    r = run_hammer(["load", "-", "--rate", "fast"], input_text="")
    assert r.returncode == 2 and "--rate" in r.stderr and r.stderr.count("\n") == 1
    r = run_hammer(["load", "/nonexistent/urls.txt"])
    assert r.returncode == 2 and "/nonexistent/urls.txt" in r.stderr
    r = run_hammer(["load", "-", "--loop"], input_text=serve.url("/") + "\n")
    assert r.returncode == 2 and "--loop" in r.stderr


def test_requests_limit_with_loop_is_exact(serve):
    r = run_hammer(["load", "-", "--loop", "-n", "1234", "-c", "16", "-t", "2"],
                   input_text=serve.url("/") + "\n" + serve.url("/bytes/10") + "\n")
    assert r.returncode == 0, r.stderr
    assert len(r.records) == 1234
    assert serve.stats()["requests"] == 1234


def test_open_loop_rate_is_accurate(serve, tmp_path):
    summary = tmp_path / "summary.json"
    r = run_hammer(["load", "-", "--loop", "--rate", "2000", "-d", "10s", "-c", "200",
                    "--emit", "none", "--summary-json", str(summary)],
                   input_text=serve.url("/") + "\n", timeout=60)
    assert r.returncode == 0, r.stderr
    s = json.loads(summary.read_text())
    assert s["failed"] == 0
    assert abs(s["requests"] - 20000) <= 200, s


def test_coordinated_omission_is_corrected(serve, tmp_path):
    summary = tmp_path / "summary.json"
    # 50 req/s against a 100 ms endpoint with only 2 in flight: at most 20 req/s get through,
    # so requests queue. Latency from the due time grows; from the send time it stays ~100 ms.
    r = run_hammer(["load", "-", "--loop", "--rate", "50", "-d", "3s", "-c", "2",
                    "--emit", "none", "--summary-json", str(summary)],
                   input_text=serve.url("/delay/100") + "\n", timeout=60)
    assert r.returncode == 0, r.stderr
    s = json.loads(summary.read_text())
    assert s["uncorrected_latency"]["p50_us"] >= 100_000, s
    assert s["latency"]["p50_us"] > 3 * s["uncorrected_latency"]["p50_us"], s
    assert s["late"] > 0


def test_ten_million_lines_do_not_grow_memory(serve, tmp_path):
    """Input is streamed: reading 10 M lines costs no more memory than reading 10 k."""
    def max_rss_kib(lines):
        script = (f"yes '# padding line of a big weighted URL list' | head -n {lines}; "
                  f"for i in $(seq 100); do echo {serve.url('/')}; done")
        cmd = f"({script}) | /usr/bin/time -f %M {HAMMER} load - -c 10 --emit none -q"
        proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return int(proc.stderr.strip().splitlines()[-1])
    small = max_rss_kib(10_000)
    big = max_rss_kib(10_000_000)
    assert big < small + 4096, (small, big)


def test_load_writes_the_html_report_and_timestamped_records(serve, tmp_path):
    report = tmp_path / "report.html"
    r = run_hammer(["load", "-", "--loop", "-n", "300", "-c", "4", "-t", "1", "--timestamps",
                    "--html", str(report)],
                   input_text=serve.url("/") + "\n" + serve.url("/status/500") + "\n")
    assert r.returncode == 0, r.stderr
    # Timestamped records: KEY<TAB>SECONDS<TAB>EPOCH_MS (failures: KEY<TAB><TAB>EPOCH_MS).
    assert all(re.fullmatch(r"[^\t]+\t(\d+\.\d{6})?\t\d{13}", rec) for rec in r.records)
    html = report.read_text()
    assert "<table" in html and serve.url("/status/500") in html
    assert "<svg" in html
    # hammer stats reads timestamped records back, with the same per-key counts.
    stats = subprocess.run([HAMMER, "stats", "--reducer"], input="\n".join(r.records) + "\n",
                           capture_output=True, text=True, check=True)
    rows = {line.split("\t")[0]: line.split("\t") for line in stats.stdout.splitlines()}
    assert int(rows[serve.url("/")][6]) == 150 and int(rows[serve.url("/status/500")][5]) == 150


def test_concurrency_is_honoured_for_a_short_list_with_two_threads(logged, tmp_path):
    summary = tmp_path / "s.json"
    r = run_hammer(["load", "-", "-c", "8", "-t", "2", "--summary-json", str(summary)],
                   input_text=url_lines(*[logged.url("/delay/500")] * 8))
    assert r.returncode == 0, r.stderr
    s = summary_of(summary)
    assert s["succeeded"] == 8
    assert s["connections_opened"] == 8, s
    # All 8 were in flight at once: at nginx, the last one began before the first one ended
    # (each lasts 500 ms; $msec is the end, $request_time the duration).
    log = logged.log.entries()
    assert len(log) == 8
    ends = [float(e["t"]) for e in log]
    begins = [end - float(e["rt"]) for end, e in zip(ends, log)]
    assert max(begins) < min(ends), (begins, ends)
