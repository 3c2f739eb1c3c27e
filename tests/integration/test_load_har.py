"""`hammer load --har`: a HAR written by hand with every kind of unsupported entry, and a genuine
one recorded by Debian's headless Chromium (chromium_har.py) visiting a page on loopback,
replayed with and without --har-timing. What nginx received is read from its access log."""
import base64
import datetime
import json
import re
import shutil
import statistics
import tempfile
from pathlib import Path

import pytest

import chromium_har
import playwright_chromium
from harness import HammerServe, Nginx, run_hammer, summary_of
from logged_nginx import LOG_FORMAT, AccessLog


def har_entry(url, method="GET", started="2026-01-01T00:00:00.000Z", **extra):
    entry = {"startedDateTime": started, "time": 1,
             "request": {"method": method, "url": url, "httpVersion": "HTTP/1.1",
                         "headers": [], "queryString": [], "cookies": [],
                         "headersSize": -1, "bodySize": 0},
             "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                          "headers": [], "cookies": [], "content": {"size": 0},
                          "redirectURL": "", "headersSize": -1, "bodySize": 0},
             "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}}
    entry.update(extra)
    return entry


def test_har_unsupported_entries_are_skipped_with_counts(logged, tmp_path):
    good = har_entry(logged.url("/echo"), "POST")
    good["request"]["headers"] = [{"name": "X-Test", "value": "har"},
                                  {"name": "Host", "value": "dropped.example"},
                                  {"name": ":authority", "value": "dropped"},
                                  {"name": "Content-Length", "value": "999"}]
    good["request"]["postData"] = {"mimeType": "text/plain", "text": "from har"}
    unanswered = har_entry(logged.url("/never"))
    unanswered["response"]["status"] = 0
    entries = [
        good,
        har_entry("data:image/png;base64,iVBORw0KGgo="),
        har_entry("data:text/plain,hello"),
        har_entry("ws://127.0.0.1:1/socket"),
        har_entry("blob:http://127.0.0.1/uuid"),
        har_entry(logged.url("/cached"), _fromCache="memory"),
        har_entry(logged.url("/cached-too"), _fromCache="disk"),
        unanswered,
        {"startedDateTime": "2026-01-01T00:00:00Z"},  # no request at all
        har_entry(logged.url("/bad-method"), "GE T"),
        har_entry(logged.url("/")),
    ]
    har = tmp_path / "mixed.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "test"},
                                       "entries": entries}}))
    r = run_hammer(["load", "--har", str(har), "-c", "1", "-t", "1"])
    assert r.returncode == 0, r.stderr
    assert len(r.successes()) == 2, r.stderr
    skipped = {m.group(2): int(m.group(1)) for m in
               re.finditer(r"^  skipped +(\d+) request-file entries: (.+)$", r.stderr, re.M)}
    assert skipped == {"data: URL": 2, "ws: URL": 1, "blob: URL": 1, "served from cache": 2,
                       "no response": 1, "malformed entry": 1, "invalid method": 1}, r.stderr
    log = logged.log.entries()
    assert [(e["m"], e["u"], e["x"], e["b"], e["cl"]) for e in log] == [
        ("POST", "/echo", "har", "from har", "8"), ("GET", "/", "", "", "")]


PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>loading</title></head>
<body>
<img src="/pixel.png" alt="pixel">
<img src="data:image/png;base64,{pixel}" alt="inline">
<script>
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
window.addEventListener('load', async () => {{
  await pause(150);
  await fetch('/api/one', {{headers: {{'X-Test': 'one'}}}});
  await pause(150);
  await fetch('/api/two', {{method: 'POST', body: 'x=1',
    headers: {{'Content-Type': 'application/x-www-form-urlencoded', 'X-Test': 'two'}}}});
  document.title = 'done';
}});
</script>
</body></html>
"""


@pytest.fixture(scope="module")
def chromium_site(tmp_path_factory):
    """nginx serving a page whose script fetches two API URLs, plus a HAR of Chromium visiting
    it. Module-scoped: recording takes a few seconds."""
    playwright_chromium.require()
    tmp = tmp_path_factory.mktemp("chromium")
    # nginx's workers run as nobody and pytest's tmp dirs are private: the pages go elsewhere.
    site = Path(tempfile.mkdtemp(prefix="hammer-site-"))
    site.chmod(0o755)
    pixel = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AA"
                             "AAMBAQDJ/pLvAAAAAElFTkSuQmCC")
    (site / "pixel.png").write_bytes(pixel)
    (site / "index.html").write_text(PAGE.format(pixel=base64.b64encode(pixel).decode()))
    for f in site.iterdir():
        f.chmod(0o644)
    serve = nginx = None
    try:
        serve = HammerServe()
        log = AccessLog(tmp / "access.log")
        nginx = Nginx(http_extra=LOG_FORMAT, server_extra=f"""
    access_log {log.path} hammer_json;
    location = /index.html {{ root {site}; }}
    location = /pixel.png {{ root {site}; }}
    location = /favicon.ico {{ return 404; }}
    location /api/ {{ rewrite ^ /echo break; proxy_pass http://{serve.address}; }}""")
        log.marker_url = nginx.url()
        har = chromium_har.record_har(nginx.url("/index.html"), tmp / "page.har", tmp)
        yield nginx, log, har
    finally:
        if nginx:
            nginx.stop()
        if serve:
            serve.stop()
        shutil.rmtree(site, ignore_errors=True)


def http_entries(har_path):
    entries = json.loads(Path(har_path).read_text())["log"]["entries"]
    return [e for e in entries if e["request"]["url"].startswith("http")], \
           [e for e in entries if e["request"]["url"].startswith("data:")]


def test_har_from_chromium_is_replayed(chromium_site, tmp_path):
    nginx, log, har = chromium_site
    http, data = http_entries(har)
    # What the browser did, as recorded (the favicon request, if any, is not in Playwright's HAR).
    paths = [e["request"]["url"].split(str(nginx.port), 1)[1] for e in http]
    assert paths == ["/index.html", "/pixel.png", "/api/one", "/api/two"], paths
    assert len(data) == 1
    post = http[3]["request"]
    assert post["method"] == "POST" and post["postData"]["text"] == "x=1"

    log.clear()
    summary = tmp_path / "s.json"
    r = run_hammer(["load", "--har", str(har), "-c", "1", "-t", "1",
                    "--summary-json", str(summary)])
    assert r.returncode == 0, r.stderr
    assert [rec.split("\t")[0] for rec in r.records] == [e["request"]["url"] for e in http]
    assert summary_of(summary)["succeeded"] == 4, r.stderr
    assert "skipped      1 request-file entries: data: URL" in r.stderr
    got = log.entries()
    assert [(e["m"], e["u"], e["x"], e["b"], e["ct"]) for e in got] == [
        ("GET", "/index.html", "", "", ""),
        ("GET", "/pixel.png", "", "", ""),
        ("GET", "/api/one", "one", "", ""),
        ("POST", "/api/two", "two", "x=1", "application/x-www-form-urlencoded"),
    ]
    # The browser's own headers are replayed, not hammer's.
    assert all("Chrome" in e["ua"] for e in got), [e["ua"] for e in got]


def test_har_timing_keeps_order_and_gaps(chromium_site, tmp_path):
    nginx, log, har = chromium_site
    http, _ = http_entries(har)

    def epoch(text):
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()

    recorded = [epoch(e["startedDateTime"]) - epoch(http[0]["startedDateTime"]) for e in http]
    span = recorded[-1]
    assert span >= 0.25, recorded  # the page pauses 150 ms twice
    log.clear()
    summary = tmp_path / "s.json"
    # Enough slots for all four at once: only the recorded offsets keep them apart.
    r = run_hammer(["load", "--har", str(har), "--har-timing", "-c", "8", "-t", "1",
                    "--timestamps", "--summary-json", str(summary)])
    assert r.returncode == 0, r.stderr
    # When hammer had each entry due (its records: the end less the latency, which counts from
    # the due time), from the replay's start (the median of the offsets from the recorded ones;
    # a busy machine makes a request late, never its due time).
    urls = [e["request"]["url"] for e in http]
    due = dict(r.due_times())
    assert sorted(due) == sorted(urls), r.records
    start = statistics.median(due[url] - recorded[i] for i, url in enumerate(urls))
    replayed = [due[url] - start for url in urls]
    for i in range(1, len(urls)):
        # Not before its recorded offset ...
        assert replayed[i] >= recorded[i] - 0.005, (i, recorded, replayed)
    for i in range(len(urls) - 1):
        # ... and due before the next entry was: the recorded order of the gaps is kept.
        if recorded[i + 1] - recorded[i] >= 0.05:
            assert replayed[i] < recorded[i + 1], (i, recorded, replayed)
    # nginx received each once, none before it was due: when it began reading the request
    # ($msec at the end less $request_time, both in ms).
    got = log.entries()
    assert sorted(e["u"] for e in got) == sorted(
        ["/index.html", "/pixel.png", "/api/one", "/api/two"])
    arrived = {e["u"]: float(e["t"]) - float(e["rt"]) for e in got}
    for i, url in enumerate(urls):
        path = url.split(str(nginx.port), 1)[1]
        assert arrived[path] >= start + recorded[i] - 0.005, (path, arrived, start, recorded)
    assert summary_of(summary)["seconds"] >= span - 0.005
