"""Load shapes: --stages ramps the open-loop rate as k6's ramping-arrival-rate does (checked on
the due times hammer records and on the arrival times nginx logs), --warmup leaves the first part
of a run out of every figure, and --think-time paces a closed loop's simulated users."""
import json
import math
import statistics

from harness import run_hammer, url_lines


def per_second(times, start):
    counts = {}
    for t in times:
        second = int(t - start)
        counts[second] = counts.get(second, 0) + 1
    return [counts.get(i, 0) for i in range(max(counts) + 1)]


def due_in_stages(n):
    """When request n is due, from the start, under '2s:600,2s:600': the integral of the rate
    (0 -> 600/s over 2 s: 150 t^2, then 600/s) reaches n."""
    return math.sqrt(n / 150) if n < 600 else 2 + (n - 600) / 600


def test_stages_rate_follows_the_schedule_within_one_percent(logged, tmp_path):
    summary = tmp_path / "s.json"
    # 0 -> 600/s over 2 s, then 600/s for 2 s: per second 150, 450, 600, 600 (the integral).
    # 1800 are due before the end (n = 0..1799), each with a URL of its own so that hammer's
    # records and nginx's log pair up, and a slot each so that none is dropped however late a
    # busy machine answers.
    urls = url_lines(*(logged.url(f"/?n={n}") for n in range(1800)))
    r = run_hammer(["load", "-", "--stages", "2s:600,2s:600", "-c", "1800", "-t", "1",
                    "--timestamps", "--summary-json", str(summary)], input_text=urls)
    assert r.returncode == 0, r.stderr
    assert "replaying the input for 4s" in r.stderr  # the stages set the duration
    s = json.loads(summary.read_text())
    assert (s["requests"], s["dropped"], s["failed"]) == (1800, 0, 0), s
    # When hammer had each request due (what it sends by; a loaded machine only makes the
    # sending late), from the run's start: the median of the offsets from the integral.
    due = {int(key.rsplit("=", 1)[1]): t for key, t in r.due_times()}
    assert sorted(due) == list(range(1800))
    start = statistics.median(t - due_in_stages(n) for n, t in due.items())
    got = per_second(due.values(), start)
    expected = [150, 450, 600, 600]
    assert len(got) == 4, got
    for second, (g, e) in enumerate(zip(got, expected)):
        assert abs(g - e) <= e * 0.01, (second, got, expected)
    # nginx received each once, none before it was due: when it began reading the request
    # ($msec at the end less $request_time, both in ms).
    entries = logged.log.entries()
    arrived = {int(e["u"].rsplit("=", 1)[1]): float(e["t"]) - float(e["rt"]) for e in entries}
    assert len(entries) == 1800 and sorted(arrived) == list(range(1800))
    early = {n: (a, start + due_in_stages(n)) for n, a in arrived.items()
             if a < start + due_in_stages(n) - 0.005}
    assert not early, early


def test_warmup_is_sent_but_counted_nowhere(serve, tmp_path):
    summary = tmp_path / "s.json"
    r = run_hammer(["load", serve.url("/"), "--rate", "100", "-d", "1500ms", "--warmup", "500ms",
                    "-c", "20", "-t", "1", "--summary-json", str(summary)])
    assert r.returncode == 0, r.stderr
    s = json.loads(summary.read_text())
    # 150 due in 1.5 s; the 50 due in the first 0.5 s were sent and left out.
    assert s["warmup"] + s["requests"] + s["dropped"] == 150, s
    assert s["requests"] == len(r.records)  # no record for a warmup request
    assert serve.stats()["requests"] == s["warmup"] + s["requests"]
    assert 45 <= s["warmup"] <= 55, s  # due in [0, 0.5 s): 50, give or take one in flight
    assert s["seconds"] < 1.5  # the measured part only
    assert "warmup" in r.stderr


def test_think_time_paces_a_closed_loop(serve, tmp_path):
    summary = tmp_path / "s.json"
    r = run_hammer(["load", serve.url("/"), "-c", "2", "-t", "1", "-d", "1s",
                    "--think-time", "200ms", "--emit", "none", "--summary-json", str(summary)])
    assert r.returncode == 0, r.stderr
    s = json.loads(summary.read_text())
    # Each of the 2 users sends at most one request per 200 ms of the 1 s run.
    assert 2 <= s["requests"] <= 2 * 5 + 2, s
    assert serve.stats()["requests"] == s["requests"]
    for spec in ("uniform:50ms,100ms", "exp:50ms"):
        r = run_hammer(["load", serve.url("/"), "-c", "2", "-t", "1", "-d", "500ms",
                        "--think-time", spec, "--emit", "none"])
        assert r.returncode == 0, r.stderr
    r = run_hammer(["load", serve.url("/"), "--rate", "10", "--think-time", "1s"])
    assert r.returncode == 2 and "closed loop" in r.stderr
    r = run_hammer(["load", serve.url("/"), "--think-time", "uniform:2s,1s"])
    assert r.returncode == 2 and "--think-time" in r.stderr
    r = run_hammer(["load", serve.url("/"), "--stages", "10s:x"])
    assert r.returncode == 2 and "--stages: stage 1 '10s:x'" in r.stderr
