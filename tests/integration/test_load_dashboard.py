"""`hammer load --dashboard`: the live page of a run against a real `hammer serve`.

curl reads /events during a run (the Server-Sent Events framing: a retry line, "update" events
whose seq and requests grow, one "done" event carrying the final report, then the stream's
end) and checks that a port alone binds loopback. Headless Chromium (playwright-core, as in
test_html_report.py) opens the page during a run with every request outside loopback aborted,
sees the figures change from one update to the next, and at the end finds on the page the
figures of --summary-json (requests, failed, p50, p99 as the report renders them). A
screenshot taken mid-run is kept as tests/integration/.artifacts/dashboard.png (docs/img/
dashboard.png is a copy of one).

Needs $HAMMER, /usr/bin/chromium and playwright-core (`make deps-test` installs them).
"""
import json
import re
import signal
import socket
import subprocess
from pathlib import Path

import pytest

import playwright_chromium
from harness import ARTIFACTS, HAMMER, url_lines

DASHBOARD_LINE = re.compile(r"hammer load: dashboard at (http://127\.0\.0\.1:(\d+)/)")


def start_load(serve, tmp_path, seconds, extra=()):
    """`hammer load --dashboard :0` for `seconds` at 300 req/s over a mix of URLs (some slow,
    some failing); returns the process, the page's URL and the summary path."""
    urls = tmp_path / "urls.txt"
    urls.write_text(url_lines(serve.url("/"), serve.url("/delay/3"), serve.url("/status/503"),
                              serve.url("/bytes/512"), serve.url("/delay/1")))
    summary = tmp_path / "summary.json"
    proc = subprocess.Popen(
        [HAMMER, "load", str(urls), "--dashboard", ":0", "--duration", f"{seconds}s",
         "--rate", "300", "-c", "20", "--emit", "none", "--summary-json", str(summary), *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    first = proc.stderr.readline()
    m = DASHBOARD_LINE.search(first)
    if not m:
        proc.kill()
        raise AssertionError(f"no dashboard URL on stderr: {first!r} {proc.stderr.read()}")
    return proc, m.group(1), summary


def finish(proc, timeout=60):
    err = proc.stderr.read()
    assert proc.wait(timeout=timeout) == 0, err
    return err


def events(text):
    """The messages of an event stream, each a dict of its fields (the data lines joined)."""
    out = []
    for block in text.split("\n\n"):
        if not block:
            continue
        fields = {}
        for line in block.split("\n"):
            name, _, value = line.partition(": ")
            fields[name] = fields[name] + "\n" + value if name in fields else value
        out.append(fields)
    return out


def test_events_are_server_sent_events_ending_with_the_report(serve, tmp_path):
    proc, url, summary = start_load(serve, tmp_path, seconds=4)
    curl = subprocess.run(["curl", "-sS", "-N", "--max-time", "30", "-D", "-", url + "events"],
                          capture_output=True, text=True, timeout=60)
    finish(proc)
    assert curl.returncode == 0, curl.stderr  # the chunked stream ended properly
    head, _, body = curl.stdout.partition("\n\n")  # text mode: CRLF read as LF
    assert head.startswith("HTTP/1.1 200"), head
    assert re.search(r"(?im)^content-type: text/event-stream", head), head
    assert body.endswith("\n\n"), body[-200:]
    messages = events(body)
    assert messages[0] == {"retry": "1000"}
    updates = [m for m in messages if m.get("event") == "update"]
    done = [m for m in messages if m.get("event") == "done"]
    assert messages[-1] is done[-1] and len(done) == 1
    assert len(updates) >= 3, [m.get("event") for m in messages]
    assert all(set(m) == {"event", "data"} for m in updates)
    figures = [json.loads(m["data"]) for m in updates]
    seqs = [f["seq"] for f in figures]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
    assert figures[-2]["requests"] > figures[1]["requests"] > 0  # the first may come before any
    assert all(f["requests"] == f["succeeded"] + f["failed"] for f in figures)
    assert figures[-1]["running"] is False and figures[0]["running"] is True
    assert figures[-1]["main"].startswith("<main>") and 'id="chart-latency"' in figures[-1]["main"]
    final = json.loads(done[0]["data"])["html"]
    assert final.startswith("<!DOCTYPE html>") and "data-events" not in final
    result = json.loads(summary.read_text())
    assert f'<div class="label">requests</div><div class="value">{result["requests"]:,}<' in final
    # The last update is the run's final figures.
    assert figures[-1]["requests"] == result["requests"]
    assert figures[-1]["failed"] == result["failed"]


def listening_addresses(port):
    """The local addresses of the listening TCP sockets on `port` (from /proc/net/tcp{,6})."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, port_hex = fields[1].rsplit(":", 1)
            if int(port_hex, 16) == port and fields[3] == "0A":  # TCP_LISTEN
                found.append(address)
    return found


def test_a_port_alone_binds_loopback_and_the_page_is_served_after_the_end(serve, tmp_path):
    proc, url, _ = start_load(serve, tmp_path, seconds=1, extra=["--dashboard-linger", "30s"])
    port = int(url.rsplit(":", 1)[1].strip("/"))
    assert listening_addresses(port) == ["0100007F"]  # 127.0.0.1, nothing else
    # After the run, --dashboard-linger: / is the final report, /events says so at once.
    said = ""
    while "(--dashboard-linger)" not in said:
        line = proc.stderr.readline()
        assert line, said
        said += line
    page = subprocess.run(["curl", "-sS", "--max-time", "5", url], capture_output=True,
                          text=True).stdout
    assert page.startswith("<!DOCTYPE html>") and "data-events" not in page, page[:300]
    stream = subprocess.run(["curl", "-sS", "--max-time", "5", url + "events"],
                            capture_output=True, text=True)
    assert stream.returncode == 0
    assert [m["event"] for m in events(stream.stdout)] == ["done"]
    missing = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                              url + "nothing"], capture_output=True, text=True).stdout
    assert missing == "404"
    proc.send_signal(signal.SIGINT)  # ends the linger
    finish(proc)


def test_at_most_eight_pages_follow_the_stream(serve, tmp_path):
    proc, url, _ = start_load(serve, tmp_path, seconds=3)
    port = int(url.rsplit(":", 1)[1].strip("/"))
    sockets = []
    try:
        statuses = []
        for _ in range(9):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            head = b""
            while b"\r\n" not in head:
                head += s.recv(1)
            statuses.append(head.split()[1].decode())
            sockets.append(s)
        assert statuses == ["200"] * 8 + ["503"]
    finally:
        for s in sockets:
            s.close()
    finish(proc)


PAGE_JS = r"""
const [url, shot] = process.argv.slice(2);
(async () => {
  const browser = await launch();
  const page = await browser.newPage({ viewport: { width: 1000, height: 860 } });
  const outside = [];
  await page.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (u.hostname === '127.0.0.1') return route.continue();
    outside.push(u.href);
    return route.abort();
  });
  const tiles = () => page.evaluate(() => {
    const out = {};
    for (const t of document.querySelectorAll('.summary .tile')) {
      out[t.querySelector('.label').textContent] = t.querySelector('.value').firstChild.textContent;
    }
    return out;
  });
  const seq = () => page.evaluate(() => Number(document.body.dataset.seq || 0));
  await page.goto(url);
  await page.waitForFunction(() => Number(document.body.dataset.seq || 0) >= 2, null,
                             { timeout: 30000 });
  const first = { seq: await seq(), tiles: await tiles() };
  await page.waitForFunction((s) => Number(document.body.dataset.seq || 0) >= s + 2, first.seq,
                             { timeout: 30000 });
  const later = { seq: await seq(), tiles: await tiles() };
  const live = await page.evaluate(() => ({
    charts: Array.from(document.querySelectorAll('figure.chart')).map((f) => f.id),
    keys: document.querySelectorAll('#key-table tbody tr').length,
    errors: document.body.dataset.errors || '',
    state: document.body.dataset.live,
  }));
  await page.screenshot({ path: shot });
  await page.waitForFunction(() => !document.body.dataset.events && document.body.dataset.ready === '1',
                             null, { timeout: 60000 });
  const final = await page.evaluate(() => ({
    errors: document.body.dataset.errors || '',
    title: document.title,
    live: document.body.dataset.live || '',
  }));
  final.tiles = await tiles();
  console.log(JSON.stringify({ outside, first, later, live, final }));
  await browser.close();
})().catch((e) => { console.error(e); process.exit(1); });
"""


def short_duration(micros):
    """The report's summary tiles' rendering of a time (stats/report/html.cc ShortDuration)."""
    ms = micros / 1000
    if ms >= 1000:
        return f"{ms / 1000:.3g} s"
    if ms >= 100:
        return f"{ms:.0f} ms"
    if ms >= 10:
        return f"{ms:.1f} ms"
    if ms >= 1:
        return f"{ms:.2f} ms"
    return f"{ms:.3f} ms"


def test_chromium_watches_the_run_offline_and_ends_on_the_summary(serve, tmp_path):
    playwright_chromium.require()
    proc, url, summary = start_load(serve, tmp_path, seconds=12)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "dashboard.png"
    out = playwright_chromium.run_script(PAGE_JS, [url, shot], tmp_path, timeout=120)
    finish(proc)
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen["outside"] == []  # nothing but hammer itself was asked for
    first, later = seen["first"], seen["later"]
    assert later["seq"] >= first["seq"] + 2
    count = lambda tiles: int(tiles["requests"].replace(",", ""))
    assert count(later["tiles"]) > count(first["tiles"]) > 0
    live = seen["live"]
    assert live["errors"] == "" and live["state"] == "running"
    assert {"chart-throughput", "chart-latency", "chart-errors", "chart-spectrum"} <= \
        set(live["charts"]), live["charts"]
    assert live["keys"] == 5
    final = seen["final"]
    assert final["errors"] == "" and final["live"] == ""
    result = json.loads(summary.read_text())
    assert result["failed"] > 0 and result["failures"]["http_5xx"] == result["failed"]
    assert final["tiles"]["requests"] == f"{result['requests']:,}"
    assert final["tiles"]["succeeded"] == f"{result['succeeded']:,}"
    assert final["tiles"]["failed"] == f"{result['failed']:,}"
    assert final["tiles"]["p50"] == short_duration(result["latency"]["p50_us"])
    assert final["tiles"]["p99"] == short_duration(result["latency"]["p99_us"])
    assert shot.stat().st_size < 200_000
