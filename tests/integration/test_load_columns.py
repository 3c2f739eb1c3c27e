"""What the summary's figures are called and what they add up to (issue 51, item 6): the table
names its columns requests, ok and errors (the terminal and the HTML), the responses by HTTP
status are in the summary under the TOTAL row, in --summary-json and in the HTML, and `hammer
stats` holds every percentile within the key's exact max, as `hammer load` does; the reducer
keeps the seed's column names and --help says what they count."""
import json
from html.parser import HTMLParser

from harness import run_hammer, url_lines


class _Tables(HTMLParser):
    """The header and body cells of every <table id=...> of a page, by id."""

    def __init__(self):
        super().__init__()
        self.tables, self._table, self._cell, self._row = {}, None, None, None

    def handle_starttag(self, tag, attrs):
        if tag == "table" and dict(attrs).get("id"):
            self._table = self.tables.setdefault(dict(attrs)["id"], [])
        elif self._table is not None and tag == "tr":
            self._row = []
            self._table.append(self._row)
        elif self._row is not None and tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag == "table":
            self._table = self._row = None
        elif tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def html_tables(path):
    parser = _Tables()
    parser.feed(path.read_text())
    return parser.tables


def test_table_columns_are_requests_ok_errors_and_statuses_are_counted(serve, tmp_path):
    ok_url, bad_url = serve.url("/"), serve.url("/status/500")
    summary, html = tmp_path / "summary.json", tmp_path / "report.html"
    r = run_hammer(["load", "-", "-c", "4", "-t", "1", "--table", "--summary-json", str(summary),
                    "--html", str(html)],
                   input_text=url_lines(*[ok_url] * 10, *[bad_url] * 10))
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    header = next(line for line in lines if line.startswith("key "))
    assert header.split()[:4] == ["key", "requests", "ok", "errors"], header
    rows = {line.split()[0]: line.split()[1:4] for line in lines[lines.index(header) + 1:]
            if line.split() and line.split()[0] in (ok_url, bad_url, "TOTAL")}
    # Once "count 0, errors 10" and "TOTAL count 10" for 20 sent.
    assert rows == {ok_url: ["10", "10", "0"], bad_url: ["10", "0", "10"],
                    "TOTAL": ["20", "10", "10"]}, r.stderr
    # The responses by status close the summary, under the table's TOTAL row (then the report's
    # path).
    status = lines.index("  status codes 200: 10, 500: 10")
    assert lines[status - 1].startswith("TOTAL "), r.stderr

    document = json.loads(summary.read_text())
    assert document["status_codes"] == {"200": 10, "500": 10}, document

    tables = html_tables(html)
    key_head = tables["key-table"][0]
    assert key_head[:5] == ["key", "requests", "ok", "errors", "error %"], key_head
    total = tables["key-table"][-1]
    assert total[:4] == ["TOTAL", "20", "10", "10"], total
    assert tables["status-table"][1:] == [["200", "10", "50.00%"], ["500", "10", "50.00%"]], \
        tables["status-table"]


def test_a_request_without_response_has_no_status(serve):
    # A refused connection gets no status: counted under its failure type only.
    refused = "http://127.0.0.1:1/"
    r = run_hammer(["load", "-c", "1", "-t", "1", "--table", serve.url("/"), refused])
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[-1] == "  status codes 200: 1", r.stderr


def test_stats_holds_percentiles_within_the_max():
    # 5442 µs lies in the histogram bucket [5440, 5443]: unclamped, p99 read 0.005443 > max.
    r = run_hammer(["stats"], input_text="k\t0.001000\nk\t0.005442\n")
    assert r.returncode == 0, r.stderr
    fields = r.stdout.rstrip("\n").split("\t")
    maximum, p50, p90, p99, p999 = fields[3], fields[7], fields[8], fields[9], fields[10]
    assert maximum == "0.005442", fields
    assert [p90, p99, p999] == ["0.005442"] * 3, fields
    assert p50 == "0.001000", fields
    # The table agrees.
    r = run_hammer(["stats", "--table"], input_text="k\t0.001000\nk\t0.005442\n")
    total = [line.split() for line in r.stdout.splitlines() if line.startswith("TOTAL")][0]
    assert total[1:4] == ["2", "2", "0"] and total[-2:] == ["5.442", "5.442"], r.stdout


def test_stats_help_says_the_reducer_keeps_the_seed_columns():
    r = run_hammer(["stats", "--help"])
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    assert "the seed reducer's columns first, as the seed named them (count: successful " \
           "requests; errors: failed ones" in text, r.stdout
    assert "requests = ok (successful) + errors (failed)" in text, r.stdout
