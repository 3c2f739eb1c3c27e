"""Replaying an access log, and one recording split across workers (issue 47, items 2 and 3).

- A real nginx writes its `combined` access log for curl's requests; `hammer load
  --targets-format access-log --replay` sends that log's GETs and HEADs to another nginx, whose
  JSON access log (logged_nginx.py) shows what arrived, in order and spread over the logged
  seconds; the POST is skipped and counted.
- `hammer dark --capture` writes `conn`: curl's requests on one connection share it.
- A capture replayed by 4 `hammer load --split i/4` processes started together (--start-at):
  the requests nginx logged are the capture's, each once, and every connection's requests were
  sent by one worker. test_hadoop_replay.py does the same with 4 Hadoop map tasks.
"""
import collections
import json
import os
import subprocess
import time
from urllib.parse import urlsplit

from harness import HAMMER, run_hammer
from logged_nginx import LoggedNginx
from prerequisites import require_program


def curl(*args):
    r = subprocess.run(["curl", "-sS", "--max-time", "10", "-o", "/dev/null", *args],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr


def test_an_nginx_access_log_replays_its_gets_on_its_schedule(start_nginx, serve, tmp_path):
    require_program("curl", "curl")
    # The log: nginx's own combined format, written by nginx for curl's requests.
    combined = tmp_path / "combined.log"
    source = start_nginx(server_extra=f"access_log {combined} combined;")
    plan = [("GET", "/a?x=1"), ("HEAD", "/b"), ("POST", "/form"), ("GET", "/c"), ("GET", "/d")]
    for i, (method, path) in enumerate(plan):
        if i == 3:
            time.sleep(1.1)  # /c and /d a logged second (or two) after the others
        args = ["-I"] if method == "HEAD" else ["-X", "POST", "-d", "x"] if method == "POST" else []
        curl(*args, source.url(path))
    source.stop()  # flushes its log
    lines = combined.read_text().splitlines()
    assert len(lines) == 5 and '"GET /a?x=1 HTTP/1.1" 200' in lines[0], lines

    logged = LoggedNginx(start_nginx, serve, tmp_path)
    r = run_hammer(["load", "--targets-format", "access-log", "--replay", "--speed", "2",
                    "--base-url", logged.url(), "--emit", "none", str(combined)])
    assert r.returncode == 0, r.stderr
    received = logged.log.entries()
    assert [(e["m"], e["u"]) for e in received] == [("GET", "/a?x=1"), ("HEAD", "/b"),
                                                    ("GET", "/c"), ("GET", "/d")]
    assert ("skipped      1 request-file entries: a method other than GET and HEAD (the log "
            "holds no body to send)") in r.stderr
    # /c and /d were logged at least a second after /a: at speed 2, half a second at least;
    # within their second they are spread, half a second apart (a quarter at speed 2). Loose:
    # nginx logs whole milliseconds, and a loaded machine delays single sends (the first one
    # also opens the connection).
    times = [float(e["t"]) for e in received]
    assert times[2] - times[0] >= 0.3, times
    assert times[3] - times[2] >= 0.15, times

    # Without --base-url the log does not say where to send: a usage error before anything.
    r = run_hammer(["load", "--targets-format", "access-log", str(combined)])
    assert r.returncode == 2
    assert "--targets-format access-log needs --base-url" in r.stderr


def test_a_malformed_log_line_stops_the_run_with_its_line_number(logged, tmp_path):
    log = tmp_path / "bad.log"
    log.write_text('127.0.0.1 - - [07/Dec/2026:18:00:00 +0000] "GET /ok HTTP/1.1" 200 2 "-" "-"\n'
                   "this is not a log line\n")
    r = run_hammer(["load", "--targets-format", "access-log", "--base-url", logged.url(),
                    "--emit", "none", str(log)])
    assert r.returncode == 2, r.stderr
    assert f"{log}:2: expected '[' and the time after the user" in r.stderr


def test_a_log_with_nothing_to_replay_says_what_was_skipped(logged, tmp_path):
    log = tmp_path / "posts.log"
    log.write_text('127.0.0.1 - - [07/Dec/2026:18:00:00 +0000] "POST /f HTTP/1.1" 201 2 "-" "-"\n')
    r = run_hammer(["load", "--targets-format", "access-log", "--base-url", logged.url(),
                    "--emit", "none", str(log)])
    assert r.returncode == 2, r.stderr
    assert (f"no requests in {log}: every entry was skipped (1 a method other than GET and HEAD "
            "(the log holds no body to send))") in r.stderr
    assert logged.log.entries() == []


def test_capture_lines_name_the_client_connection(serve, proxies, tmp_path):
    require_program("curl", "curl")
    capture = tmp_path / "conn.jsonl"
    proxy = proxies("--upstream", f"http://{serve.address}", "--capture", str(capture))
    curl(proxy.url("/one/a"), proxy.url("/one/b"))  # one curl: one kept-alive connection
    curl(proxy.url("/two"))
    proxy.wait_for_metric("hammer_dark_capture_lines_total", lambda v: v == 3)
    proxy.stop()
    conn = {urlsplit(e["url"]).path: e["conn"]
            for e in map(json.loads, capture.read_text().splitlines())}
    assert conn["/one/a"] == conn["/one/b"] != conn["/two"], conn


def synthetic_capture(path, count=240, span_us=2_000_000, connections=20):
    """A capture as dark writes it: `count` GETs over `span_us`, on `connections` connections."""
    base = 1_796_666_400_000_000
    entries = []
    for i in range(count):
        entries.append({"method": "GET", "url": f"https://prod.example/item/{i}?c={i % connections}",
                        "ts": base + i * span_us // count, "conn": i % connections,
                        "protocol": "HTTP/1.1", "status": 200, "latency_us": 300})
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return entries


def test_four_split_workers_send_the_whole_capture_each_entry_once(logged, tmp_path):
    capture = tmp_path / "capture.jsonl"
    entries = synthetic_capture(capture)
    start_at = f"{time.time() + 2:.3f}"
    workers = []
    for i in range(4):
        workers.append(subprocess.Popen(
            [HAMMER, "load", "--targets-format", "jsonl", "--replay", "--speed", "2",
             "--split", f"{i}/4", "--start-at", start_at, "--base-url", logged.url(), "-c", "8",
             "--emit", "records", str(capture)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    sent_by = {}
    for i, worker in enumerate(workers):
        out, err = worker.communicate(timeout=60)
        assert worker.returncode == 0, err
        mine = [line.split("\t")[0] for line in out.splitlines()]
        assert mine, f"worker {i} sent nothing"
        assert f"skipped      {240 - len(mine)} request-file entries: in the other parts of " \
               f"--split (4 parts)" in err, err
        for url in mine:
            sent_by[url.split("/item/")[1]] = i
    received = logged.log.entries()
    expected = sorted(f"/item/{i}?c={i % 20}" for i in range(240))
    assert sorted(e["u"] for e in received) == expected
    # By connection (the default): a connection's requests all came from one worker.
    workers_of = collections.defaultdict(set)
    for item, worker in sent_by.items():
        workers_of[item.split("?c=")[1]].add(worker)
    assert all(len(w) == 1 for w in workers_of.values()), workers_of
    assert len(set(sent_by.values())) == 4
    # Together they kept the schedule: the capture's 2 s at speed 2 took about 1 s.
    times = sorted(float(e["t"]) for e in received)
    assert 0.8 <= times[-1] - times[0] <= 1.6, times[-1] - times[0]


def test_bad_splits_are_usage_errors(tmp_path):
    outside_any_task = {k: v for k, v in os.environ.items()
                        if k not in ("HAMMER_WORKER_INDEX", "HAMMER_WORKERS",
                                     "JOB_COMPLETION_INDEX") and not k.startswith("mapreduce_")}
    capture = tmp_path / "capture.jsonl"
    synthetic_capture(capture, count=4)
    for args, message in [
        (["--split", "4/4"], "--split: parts count from 0, so i must be below N (0/4 to 3/4)"),
        (["--split", "1"], "--split: expected i/N, e.g. 0/4"),
        (["--split", "0/2", "--split-by", "host"], "--split-by: expected connection or url"),
        (["--split-by", "url"], "--split-by without --split needs this worker's index"),
    ]:
        r = run_hammer(["load", "--targets-format", "jsonl", "--dry-run", *args, str(capture)],
                       env=outside_any_task)
        assert r.returncode == 2, (args, r.stderr)
        assert message in r.stderr, (args, r.stderr)
    r = run_hammer(["load", "--split", "0/2", "http://127.0.0.1:9/"])
    assert r.returncode == 2 and "--split applies to request files" in r.stderr
