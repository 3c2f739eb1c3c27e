"""`hammer stats --html` rendered by a real browser (headless Chromium, Debian `chromium`).

Timestamped records for several keys, failures included and one key full of markup, go through
`hammer stats --html`; Chromium loads the page from a file:// URL with networking off and we
check the DOM it ends with: the script ran (data-ready="1"), no script error was recorded
(data-errors), the table has one row per key, every chart is drawn, and the markup key is text,
not markup. A wrapper page then drives the report inside an iframe (sorting by clicks, a hover
over a chart) and reports what it saw. Screenshots of each chart, taken through playwright-core,
must show every series in the chart's pixels; the page's screenshot is kept as a test artifact:
tests/integration/.artifacts/html-report.png.

Needs $HAMMER, /usr/bin/chromium and playwright-core (`make deps-test` installs them).
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

import playwright_chromium
import png_pixels
from harness import ARTIFACTS, HAMMER

CHROMIUM = playwright_chromium.CHROMIUM
T0 = 1764428700000  # 2025-11-29 15:05:00 UTC
SCRIPT_KEY = "http://127.0.0.1:8080/search?q=<script>alert('x')</script>&n=1"
KEYS = {
    "http://127.0.0.1:8080/": (7.5, 0.01),
    "http://127.0.0.1:8080/slow": (9.5, 0.02),
    "http://127.0.0.1:8080/static/app.js": (6.0, 0.0),
    SCRIPT_KEY: (8.0, 0.05),
    "http://127.0.0.1:8080/missing": (7.0, 1.0),
}


@pytest.fixture(scope="module", autouse=True)
def chromium_installed():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"no Chromium at {CHROMIUM}: run `make deps-test` (scripts/deps.sh test)",
                    pytrace=False)


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
    # Columns key, requests, ok, errors: requests = ok + errors.
    assert {row[0][1]: (int(row[1][0]), int(row[2][0]), int(row[3][0])) for row in rows} == \
        {key: (ok + failed, ok, failed) for key, (ok, failed) in counts.items()}
    table = section(dom, "key-table", "</table>")
    assert "TOTAL" in table[table.find("<tfoot>"):]

    # Charts: spectrum (one line per key with successes), errors, throughput and latency.
    spectrum = section(dom, "chart-spectrum")
    # One line per key with successes, and TOTAL.
    assert spectrum.count("<path ") == len([k for k, (ok, _) in counts.items() if ok > 0]) + 1
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
    heads[3].click();  // key, requests, ok, errors
    result.errorsHead = heads[3].textContent;
    result.errorsFirstClick = column(3);
    result.errorsSort = heads[3].getAttribute("aria-sort");
    heads[3].click();
    result.errorsSecondClick = column(3);
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
    assert result["errorsHead"] == "errors"
    assert result["errorsSort"] == "descending"
    assert [int(v) for v in result["errorsSecondClick"]] == errors[::-1]
    assert result["keys"] == sorted(KEYS)
    assert result["hoverShown"] and result["cursor"] == "visible"
    assert re.search(r"p50.*ms.*p90.*ms.*p99.*ms", result["hoverText"]), result["hoverText"]


SCREENSHOT_JS = r"""
(async () => {
  const [url, outDir] = process.argv.slice(2);
  const browser = await launch();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 2000 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(url, { waitUntil: 'load', timeout: 30000 });
    await page.waitForFunction(() => document.body.dataset.ready === '1', null,
                               { timeout: 30000 });
    const charts = {};
    for (const id of ['chart-spectrum', 'chart-errors', 'chart-throughput', 'chart-latency']) {
      const svg = page.locator(`#${id} svg`).first();
      // The colour each series or bar is painted with, as the browser resolved it.
      const colours = await svg.evaluate((el) => {
        const marks = [...el.querySelectorAll('g.series > g > path')].map(
          (p) => getComputedStyle(p).stroke);
        const bars = [...el.querySelectorAll('g.bar rect')].map((r) => getComputedStyle(r).fill);
        return [...new Set(marks.concat(bars))];
      });
      const png = `${outDir}/${id}.png`;
      await svg.screenshot({ path: png });
      charts[id] = { colours, png };
    }
    await page.screenshot({ path: `${outDir}/html-report.png` });
    console.log(JSON.stringify({ charts, errors }));
  } finally {
    await browser.close();
  }
})().catch((e) => { console.error(e && e.stack || String(e)); process.exit(1); });
"""


def rgb(text):
    """(r, g, b) of a computed CSS colour ("rgb(78, 121, 167)")."""
    m = re.fullmatch(r"rgba?\((\d+), (\d+), (\d+)(?:, [\d.]+)?\)", text)
    assert m, text
    return tuple(int(v) for v in m.groups())


def test_screenshots_show_every_chart_series(report):
    """Screenshots of each chart, taken by Chromium through playwright-core: every series and
    bar the chart declares is painted (its colour is in the chart's pixels), not only present in
    the DOM. The whole page is kept as tests/integration/.artifacts/html-report.png."""
    tmp, out, counts = report
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shots = tmp / "shots"
    shots.mkdir()
    result = json.loads(playwright_chromium.run_script(SCREENSHOT_JS, [out.as_uri(), shots],
                                                       tmp))
    assert result["errors"] == []
    shutil.copy(shots / "html-report.png", ARTIFACTS / "html-report.png")
    page = png_pixels.read(shots / "html-report.png")
    assert (page.width, page.height) == (1400, 2000)

    keys_with_successes = len([k for k, (ok, _) in counts.items() if ok > 0])
    expected_colours = {"chart-spectrum": keys_with_successes, "chart-errors": 1,
                        "chart-throughput": 2, "chart-latency": 3}
    for chart_id, chart in result["charts"].items():
        colours = [rgb(c) for c in chart["colours"]]
        assert len(colours) >= expected_colours[chart_id], (chart_id, colours)
        image = png_pixels.read(chart["png"])
        pixels = png_pixels.colour_counts(image)
        white = png_pixels.count_near(pixels, (255, 255, 255), 8)
        assert white < 0.97 * image.width * image.height, f"{chart_id} is blank"
        for colour in colours:
            # A 2-pixel stroke or a bar: at least a few dozen pixels of its own colour.
            painted = png_pixels.count_near(pixels, colour, 24)
            assert painted >= 30, (chart_id, colour, painted)


def test_many_distinct_keys_fold_into_template_rows_and_the_page_loads(tmp_path):
    """200,000 distinct URLs (an id per item, a query value per user) and 100 distinct pages:
    with --max-keys 50 the items share one template row, 49 pages get rows, the other 51 go to
    (other); the rows add up to the TOTAL, the page says what was folded, and Chromium renders it
    without a script error."""
    lines = []
    for i in range(200_000):
        lines.append(f"http://127.0.0.1:8080/item/{i}?user=u{i % 997}\t0.{1000 + i % 9000:06d}")
        if i % 2000 == 1999:
            lines.append(f"http://127.0.0.1:8080/page-{chr(97 + i // 2000 % 26)}"
                         f"{chr(97 + i // 52000)}\t")
    src = tmp_path / "records.tsv"
    src.write_text("\n".join(lines) + "\n")
    out = tmp_path / "report.html"
    proc = subprocess.run([HAMMER, "stats", "--html", str(out), "--max-keys", "50", str(src)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "exceeded --max-keys 50: grouped by path template into 50 rows" in proc.stderr, \
        proc.stderr
    dom = chromium(["--virtual-time-budget=5000", "--dump-dom", out.as_uri()],
                   tmp_path / "profile")
    body = body_attributes(dom)
    assert body.get("data-ready") == "1", f"the report script did not finish: {body}"
    assert "data-errors" not in body, f"script errors: {body.get('data-errors')}"
    # Columns key, requests, ok, errors: (ok, errors) of each row.
    rows = {row[0][1]: (int(row[2][0]), int(row[3][0])) for row in table_rows(dom, "key-table")}
    assert rows["http://127.0.0.1:8080/item/{id}?user={id}"] == (200_000, 0)
    assert rows["(other)"] == (0, 51)
    assert len(rows) == 51
    assert sum(ok + failed for ok, failed in rows.values()) == len(lines)
    assert "exceeded --max-keys 50" in dom


def svg_data_hover(dom, chart_id):
    """The hover data a line chart embeds (series names and values per x)."""
    m = re.search(r'id="%s"><svg [^>]*data-hover="([^"]*)"' % chart_id, dom)
    assert m, f"no data-hover in #{chart_id}"
    return json.loads(html.unescape(m.group(1)))


def bar_labels(dom):
    """(shown label, full key) of each bar of the errors chart, top to bottom."""
    chart = section(dom, "chart-errors")
    return [(html.unescape(short), html.unescape(full)) for full, short in
            re.findall(r'<text class="label"[^>]*><title>([^<]*)</title>([^<]*)</text>', chart)]


def naive_middle(text, max_chars=40):
    """What shortening in the middle alone shows (the report's 40 characters)."""
    if len(text) <= max_chars:
        return text
    head = (max_chars - 1) // 2
    return text[:head] + "\u2026" + text[len(text) - (max_chars - 1 - head):]


def test_report_at_scale_keeps_labels_distinct_draws_total_and_no_partial_bucket_ramp(tmp_path):
    """300 keys that differ only in the middle of long URLs, failing, over a run that starts
    0.7 s into a second and ends 0.3 s into one, at a constant 200 requests per second: the
    error bars' labels are all distinct (shortening in the middle alone would make them
    collide), the percentile chart has a TOTAL line, and the throughput chart's first and last
    buckets show the constant rate instead of a ramp and a cliff."""
    keys = [f"http://127.0.0.1:8080/api/v1/customers/{i:04d}/orders/history/all?page=1"
            for i in range(300)]
    assert len({naive_middle(k) for k in keys}) == 1  # the trap: every label the same
    start = T0 + 700
    seconds, per_second = 10, 200
    lines = []
    for i in range(seconds * per_second):
        key = keys[i % len(keys)]
        t = start + i * 1000 // per_second
        if i % 7 == 0:
            lines.append(f"{key}\t\t{t}")
        else:
            lines.append(f"{key}\t0.00{1000 + i % 5000:04d}\t{t}")
    src = tmp_path / "records.tsv"
    src.write_text("\n".join(lines) + "\n")
    out = tmp_path / "report.html"
    proc = subprocess.run([HAMMER, "stats", "--html", str(out), str(src)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    dom = chromium(["--virtual-time-budget=5000", "--dump-dom", out.as_uri()],
                   tmp_path / "profile")
    body = body_attributes(dom)
    assert body.get("data-ready") == "1" and "data-errors" not in body, body

    labels = bar_labels(dom)
    assert len(labels) == 12  # kMaxErrorBarKeys
    shown = [short for short, _ in labels]
    assert len(set(shown)) == len(shown), shown
    for short, full in labels:
        assert full in keys and len(short) <= 40, (short, full)
        # The shown part is the distinguishing one: the customer number is in it.
        assert "/" + re.search(r"customers/(\d{4})/", full).group(1) + "/" in short, (short, full)

    spectrum = svg_data_hover(dom, "chart-spectrum")
    names = [s["n"] for s in spectrum["s"]]
    assert names[0] == "TOTAL" and len(names) == 1 + 12, names
    assert section(dom, "chart-spectrum").count("<path ") == len(names)

    throughput = svg_data_hover(dom, "chart-throughput")
    requests = next(s["v"] for s in throughput["s"] if s["n"] == "requests/s")
    assert len(requests) == seconds + 1  # 0.3 s, 9 whole seconds, 0.7 s (the ends are partial)
    for i, rate in enumerate(requests):
        assert rate is not None and abs(rate - per_second) <= 0.05 * per_second, (i, requests)
    assert "run covered 0.30 s" in throughput["x"][0], throughput["x"][0]


def test_stats_key_pattern_groups_records_as_load_would(serve, tmp_path):
    """`hammer stats --key-pattern` over the records of a run without one gives the same rows
    as `hammer load --key-pattern` (the same rule, stats::KeyPatterns)."""
    urls = tmp_path / "urls.txt"
    urls.write_text("".join(serve.url(p) + "\n" for p in
                            ("/bytes/1", "/bytes/2", "/bytes/30", "/status/404", "/", "/echo")))
    pattern = "/bytes/([0-9])[0-9]*$=bytes-\\1"
    load_json = tmp_path / "load.json"
    load = subprocess.run([HAMMER, "load", str(urls), "-n", "60", "--loop", "-c", "1", "-t", "1",
                           "--key-pattern", pattern, "--summary-json", str(load_json)],
                          capture_output=True, text=True, timeout=60)
    assert load.returncode == 0, load.stderr
    plain = subprocess.run([HAMMER, "load", str(urls), "-n", "60", "--loop", "-c", "1", "-t",
                            "1"], capture_output=True, text=True, timeout=60)
    assert plain.returncode == 0, plain.stderr
    records = tmp_path / "records.tsv"
    records.write_text(plain.stdout)
    # The option comes before the file, as users write it; it must not swallow the file.
    stats = subprocess.run([HAMMER, "stats", "--json", "--key-pattern", pattern, str(records)],
                           capture_output=True, text=True, timeout=60)
    assert stats.returncode == 0, stats.stderr

    def rows(document):
        return {k["key"]: (k["succeeded"], k["failed"]) for k in document["keys"]}

    expected = rows(json.loads(load_json.read_text()))
    assert set(expected) == {"bytes-1", "bytes-2", "bytes-3", serve.url("/status/404"),
                             serve.url("/"), serve.url("/echo")}
    assert expected["bytes-1"] == (10, 0) and expected["bytes-3"] == (10, 0)
    assert rows(json.loads(stats.stdout)) == expected
    html_out = tmp_path / "grouped.html"
    r = subprocess.run([HAMMER, "stats", "--html", str(html_out), "--key-pattern", pattern,
                        str(records)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert ">bytes-3</td>" in html_out.read_text()
    bad = subprocess.run([HAMMER, "stats", "--json", "--key-pattern", "nope", str(records)],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--key-pattern 'nope': expected REGEX=NAME" in bad.stderr
