"""`hammer stats --html` rendered by a real browser (headless Chromium, Debian `chromium`).

Timestamped records for several keys, failures included and one key full of markup, go through
`hammer stats --html`; Chromium loads the page from a file:// URL with networking off and we
check the DOM it ends with: the script ran (data-ready="1"), no script error was recorded
(data-errors), the table has one row per key, every chart is drawn, and the markup key is text,
not markup. A wrapper page then drives the report inside an iframe (sorting by clicks, a hover
over a chart) and reports what it saw. A screenshot is kept as a test artifact:
tests/integration/.artifacts/html-report.png.

Needs $HAMMER and /usr/bin/chromium (`make test` installs it).
"""
import html
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness import ARTIFACTS, HAMMER

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
T0 = 1764428700000  # 2025-11-29 15:05:00 UTC
SCRIPT_KEY = "http://127.0.0.1:8080/search?q=<script>alert('x')</script>&n=1"
KEYS = {
    "http://127.0.0.1:8080/": (7.5, 0.01),
    "http://127.0.0.1:8080/slow": (9.5, 0.02),
    "http://127.0.0.1:8080/static/app.js": (6.0, 0.0),
    SCRIPT_KEY: (8.0, 0.05),
    "http://127.0.0.1:8080/missing": (7.0, 1.0),
}

pytestmark = pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK),
                                reason="needs Debian's chromium (make test installs it)")


def records(seconds=40, per_second=250, seed=7):
    """KEY<TAB>SECONDS<TAB>EPOCH_MS / KEY<TAB><TAB>EPOCH_MS lines, in time order."""
    rng = random.Random(seed)
    keys = list(KEYS)
    lines = []
    counts = {k: [0, 0] for k in keys}
    for i in range(seconds * per_second):
        key = keys[i % len(keys)]
        mu, failure_rate = KEYS[key]
        t = T0 + i * 1000 // per_second
        if rng.random() < failure_rate:
            lines.append(f"{key}\t\t{t}")
            counts[key][1] += 1
        else:
            slow = 25 <= i // per_second < 28  # a latency spike over time
            micros = int(rng.lognormvariate(mu, 0.7)) + (30000 if slow else 0)
            lines.append(f"{key}\t{micros // 1_000_000}.{micros % 1_000_000:06d}\t{t}")
            counts[key][0] += 1
    return "\n".join(lines) + "\n", counts


def chromium(args, profile, timeout=120):
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--disable-extensions", "--hide-scrollbars",
           f"--user-data-dir={profile}", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"chromium failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
    return proc.stdout


def body_attributes(dom):
    m = re.search(r"<body([^>]*)>", dom)
    assert m, dom[:2000]
    return dict((k, html.unescape(v)) for k, v in re.findall(r'([\w-]+)="([^"]*)"', m.group(1)))


class TableRows(HTMLParser):
    """The body rows of table#<table_id>: per row, per cell, (data-v attribute, text)."""

    def __init__(self, table_id):
        super().__init__()
        self.table_id = table_id
        self.inside = self.in_body = False
        self.rows = []
        self.cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table" and attrs.get("id") == self.table_id:
            self.inside = True
        elif self.inside and tag == "tbody":
            self.in_body = True
        elif self.in_body and tag == "tr":
            self.rows.append([])
        elif self.in_body and tag == "td":
            self.cell = [attrs.get("data-v"), ""]
            self.rows[-1].append(self.cell)

    def handle_endtag(self, tag):
        if tag == "tbody":
            self.in_body = False
        elif tag == "table":
            self.inside = False
        elif tag == "td":
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[1] += data


def table_rows(dom, table_id):
    parser = TableRows(table_id)
    parser.feed(dom)
    return parser.rows


def section(dom, element_id, end="</figure>"):
    start = dom.find(f'id="{element_id}"')
    assert start >= 0, f"no #{element_id} in the page"
    return dom[start:dom.find(end, start)]


@pytest.fixture(scope="module")
def report():
    tmp = Path(tempfile.mkdtemp(prefix="hammer-html-"))
    text, counts = records()
    src = tmp / "records.tsv"
    src.write_text(text)
    out = tmp / "report.html"
    proc = subprocess.run([HAMMER, "stats", "--html", str(out), "--title", "HTML <report> test",
                           str(src)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # --html alone writes nothing else
    yield tmp, out, counts
    shutil.rmtree(tmp, ignore_errors=True)


def test_page_loads_without_errors_and_shows_table_and_charts(report):
    tmp, out, counts = report
    dom = chromium(["--virtual-time-budget=5000", "--dump-dom", out.as_uri()], tmp / "profile")
    body = body_attributes(dom)
    assert body.get("data-ready") == "1", f"the report script did not finish: {body}"
    assert "data-errors" not in body, f"script errors: {body.get('data-errors')}"

    # One table row per key (its text is the key itself, markup included), and the TOTAL row.
    rows = table_rows(dom, "key-table")
    assert {row[0][1]: (int(row[1][0]), int(row[2][0])) for row in rows} == \
        {key: tuple(c) for key, c in counts.items()}
    table = section(dom, "key-table", "</table>")
    assert "TOTAL" in table[table.find("<tfoot>"):]

    # Charts: spectrum (one line per key with successes), errors, throughput and latency.
    spectrum = section(dom, "chart-spectrum")
    assert spectrum.count("<path ") == len([k for k, (ok, _) in counts.items() if ok > 0])
    for tick in ("0%", "90%", "99%", "99.9%", "99.99%"):
        assert f">{tick}</text>" in spectrum
    assert section(dom, "chart-errors").count("<rect ") >= 4
    assert section(dom, "chart-throughput").count("<path ") == 2
    latency = section(dom, "chart-latency")
    assert latency.count("<path ") == 3
    assert len(re.findall(r'<path d="M[\d.]+ [\d.]+L', latency)) == 3  # real lines, not dots

    # The markup key is text everywhere: the DOM has exactly the report's own two scripts, and
    # the key shows escaped.
    assert dom.count("<script") == 2
    assert "<script>alert" not in dom
    assert html.escape(SCRIPT_KEY, quote=False) in dom


def test_sorting_and_hover_work_in_the_browser(report):
    tmp, out, counts = report
    wrapper = tmp / "drive.html"
    wrapper.write_text("""<!DOCTYPE html><html><body>
<iframe id="f" src="%s" style="width:1400px;height:1000px"></iframe>
<script>
document.getElementById("f").addEventListener("load", function () {
  var result = {};
  try {
    var d = this.contentDocument;
    result.ready = d.body.dataset.ready;
    var heads = d.querySelectorAll("#key-table thead th");
    var column = function (i) {
      return Array.prototype.map.call(d.querySelectorAll("#key-table tbody tr"),
                                      function (r) { return r.cells[i].getAttribute("data-v"); });
    };
    heads[2].click();
    result.errorsFirstClick = column(2);
    result.errorsSort = heads[2].getAttribute("aria-sort");
    heads[2].click();
    result.errorsSecondClick = column(2);
    heads[0].click();
    result.keys = column(0);
    var svg = d.querySelector("#chart-latency svg");
    var r = svg.getBoundingClientRect();
    svg.dispatchEvent(new MouseEvent("mousemove", {bubbles: true, clientX: r.left + r.width * 0.5,
                                                   clientY: r.top + r.height * 0.5}));
    var box = d.querySelector("#chart-latency .hover");
    result.hoverShown = !box.hidden;
    result.hoverText = box.textContent;
    result.cursor = d.querySelector("#chart-latency .cursor").getAttribute("visibility");
    result.errors = d.body.dataset.errors || "";
  } catch (e) {
    result.exception = String(e);
  }
  document.body.setAttribute("data-result", JSON.stringify(result));
});
</script></body></html>""" % out.name)
    dom = chromium(["--allow-file-access-from-files", "--virtual-time-budget=5000", "--dump-dom",
                    wrapper.as_uri()], tmp / "profile-drive")
    body = body_attributes(dom)
    assert "data-result" in body, dom[-2000:]
    result = json.loads(body["data-result"])
    assert "exception" not in result, result
    assert result["ready"] == "1"
    assert result["errors"] == ""
    errors = sorted((failed for _, failed in counts.values()), reverse=True)
    assert [int(v) for v in result["errorsFirstClick"]] == errors
    assert result["errorsSort"] == "descending"
    assert [int(v) for v in result["errorsSecondClick"]] == errors[::-1]
    assert result["keys"] == sorted(KEYS)
    assert result["hoverShown"] and result["cursor"] == "visible"
    assert re.search(r"p50.*ms.*p90.*ms.*p99.*ms", result["hoverText"]), result["hoverText"]


def test_screenshot_artifact(report):
    tmp, out, _ = report
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "html-report.png"
    if shot.exists():
        shot.unlink()
    chromium(["--virtual-time-budget=5000", f"--screenshot={shot}", "--window-size=1400,2000",
              out.as_uri()], tmp / "profile-shot")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1400, 2000)
    assert len(data) > 50_000  # a drawn page, not a blank one
