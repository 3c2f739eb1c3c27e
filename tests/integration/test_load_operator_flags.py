"""`hammer load`'s operator flags: --dry-run, --verbose (secrets redacted), --start-at,
--key-pattern, --max-keys, --max-key-memory (and hammer stats --max-key-memory), and the hint to
group keys that had one request each."""
import collections
import json
import time

import jsonschema

from harness import ROOT, run_hammer, summary_of, url_lines


def test_dry_run_prints_redacted_heads_and_sends_nothing(serve):
    text = url_lines(*[f"POST {serve.url('/echo')}"] * 12)
    r = run_hammer(["load", "-", "--dry-run", "-H", "Authorization: Bearer s3cret-token",
                    "-H", "Cookie: session=s3cret-cookie; theme=dark", "--body", "payload"],
                   input_text=text)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "Authorization: [redacted]" in out, out
    assert "Cookie: session=[redacted]; theme=[redacted]" in out, out
    assert "s3cret" not in out + r.stderr
    assert out.count("POST /echo HTTP/1.1") == 10  # the first 10 by default
    assert "# 10:" in out and "# 11:" not in out
    assert serve.stats()["requests"] == 0
    r = run_hammer(["load", "-", "--dry-run", "-n", "3"], input_text=text)
    assert r.stdout.count("POST /echo HTTP/1.1") == 3
    assert serve.stats()["requests"] == 0


def test_verbose_redacts_authorization_and_cookies(serve):
    text = url_lines(serve.url("/cookie/set"), serve.url("/cookie/check"), serve.url("/"))
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--cookies", "--verbose", "2",
                    "-H", "Authorization: Basic dXNlcjpzM2NyZXQ="], input_text=text)
    assert r.returncode == 0, r.stderr
    assert len(r.successes()) == 3
    err = r.stderr
    assert err.count("> Authorization: [redacted]") == 2, err
    assert "< Set-Cookie: hammer=[redacted]; Path=/" in err, err
    assert "> Cookie: hammer=[redacted]" in err, err
    assert "dXNlcjpzM2NyZXQ=" not in err + r.stdout
    assert err.count("> GET ") == 2  # --verbose 2: two pairs, not three
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--verbose", "1"], input_text=text)
    assert r.stderr.count("> GET ") == 1


def test_start_at_delays_the_first_request(logged):
    start = time.time() + 1.5
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(start)) + \
        ".%03dZ" % int((start % 1) * 1000)
    t0 = time.time()
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--start-at", stamp],
                   input_text=url_lines(logged.url("/"), logged.url("/")))
    wall = time.time() - t0
    assert r.returncode == 0, r.stderr
    assert "for --start-at" in r.stderr
    assert wall >= start - t0 - 0.01, (wall, start - t0)
    arrived = [float(e["t"]) for e in logged.log.entries()]
    # nginx's $msec is the time the request was logged; none can predate --start-at.
    assert len(arrived) == 2 and min(arrived) >= start - 0.002, (arrived, start)
    # ... and it waited for that time, not for another as long again.
    assert max(arrived) - start < start - t0, (arrived, start, t0)

    # Unix seconds work too; a time in the past starts at once.
    logged.log.clear()
    start = int(time.time()) + 2
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--start-at", str(start)],
                   input_text=url_lines(logged.url("/")))
    assert r.returncode == 0, r.stderr
    assert float(logged.log.entries()[0]["t"]) >= start - 0.002
    r = run_hammer(["load", "-", "-c", "1", "--start-at", "2020-01-01T00:00:00Z"],
                   input_text=url_lines(logged.url("/")))
    assert r.returncode == 0 and len(r.successes()) == 1, r.stderr
    assert "for --start-at" not in r.stderr  # nothing to wait for
    r = run_hammer(["load", "-", "--start-at", "tomorrow"], input_text=url_lines(logged.url("/")))
    assert r.returncode == 2 and "--start-at" in r.stderr


def test_key_pattern_collapses_ids_into_one_key(serve, tmp_path):
    summary = tmp_path / "s.json"
    text = url_lines(*[serve.url(f"/item/{i}") for i in range(1, 6)], serve.url("/other"))
    r = run_hammer(["load", "-", "-c", "2", "-t", "1", "--key", "path",
                    "--key-pattern", "^/item/[0-9]+$=/item/:id", "--summary-json", str(summary)],
                   input_text=text)
    assert r.returncode == 0, r.stderr
    assert collections.Counter(rec.split("\t")[0] for rec in r.records) == \
        {"/item/:id": 5, "/other": 1}
    assert {k["key"]: k["succeeded"] for k in summary_of(summary)["keys"]} == \
        {"/item/:id": 5, "/other": 1}
    # With --key url the pattern matches inside the URL and the whole key becomes NAME.
    r = run_hammer(["load", "-", "-c", "2", "-t", "1", "--key-pattern", "/item/[0-9]+=/item/:id"],
                   input_text=text)
    assert collections.Counter(rec.split("\t")[0] for rec in r.records) == \
        {"/item/:id": 5, serve.url("/other"): 1}


def test_max_keys_groups_urls_by_template_and_records_keep_every_url(serve, tmp_path):
    # 300 distinct item URLs (one template) and 30 distinct pages (30 templates), over two
    # threads, with room for 20 rows: the items share one row, the pages fill the rest and the
    # quietest go to (other); the rows add up to every request, and records keep each URL.
    summary = tmp_path / "s.json"
    lines = []
    for i in range(300):
        lines.append(serve.url(f"/item/{1000 + i}?ref=r{i}"))
        if i % 10 == 0:
            lines.append(serve.url(f"/page-{chr(97 + i // 10)}"))
    r = run_hammer(["load", "-", "-c", "4", "-t", "2", "--max-keys", "20",
                    "--summary-json", str(summary)], input_text=url_lines(*lines))
    assert r.returncode == 0, r.stderr
    assert len(set(rec.split("\t")[0] for rec in r.records)) == 330
    s = summary_of(summary)
    rows = {k["key"]: k["requests"] for k in s["keys"]}
    assert rows[serve.url("/item/{id}?ref={id}")] == 300
    assert "(other)" in rows
    assert len(rows) <= 21
    assert sum(rows.values()) == s["requests"] == 330
    folding = s["key_folding"]
    assert folding["max_keys"] == 20 and folding["rows"] == len(rows) - 1
    assert "exceeded --max-keys 20" in r.stderr and "(other)" in r.stderr, r.stderr


def test_a_list_of_urls_each_sent_once_is_told_how_to_group_them(serve, tmp_path):
    # 150 distinct URLs each sent once, over two threads: 150 rows of one request, so the summary
    # and the HTML report say how to group them; the same list sent twice, or folded by
    # --max-keys, gets no such sentence.
    urls = tmp_path / "urls.txt"
    urls.write_text(url_lines(*[serve.url(f"/item/{i}?ref=r{i * 7}") for i in range(150)]))
    hint = ("each of the 150 keys had one request: group them into fewer rows with --key-pattern "
            "REGEX=NAME, or by path template with --max-keys below 150")
    html = tmp_path / "r.html"
    r = run_hammer(["load", str(urls), "-c", "4", "-t", "2", "--html", str(html)])
    assert r.returncode == 0, r.stderr
    assert len(r.records) == 150
    assert "  keys         " + hint + "\n" in r.stderr, r.stderr
    assert "Each of the 150 keys had one request" in html.read_text()
    r = run_hammer(["load", str(urls), "--loop", "-n", "300", "-c", "4", "-t", "2"])
    assert r.returncode == 0, r.stderr
    assert len(r.records) == 300
    assert "had one request" not in r.stderr, r.stderr
    r = run_hammer(["load", str(urls), "-c", "4", "-t", "2", "--max-keys", "100"])
    assert r.returncode == 0, r.stderr
    assert "had one request" not in r.stderr, r.stderr
    assert "exceeded --max-keys 100: grouped by path template into 1 row" in r.stderr, r.stderr


def test_max_key_memory_folds_a_replayed_list_and_the_rows_add_up(serve, tmp_path):
    # 1,000 distinct URLs replayed to 6,000 requests over two threads: far fewer keys than
    # --max-keys, but their rows (about 0.6 KB each before any latency histogram) do not fit in
    # 256 KiB (128 KiB per worker), so they fold into their template, whose row does (a
    # loopback latency histogram is a few 8 KiB pages); the rows add up to every request,
    # records keep each URL, and the summary says that memory, not the key count, folded them.
    urls = tmp_path / "urls.txt"
    urls.write_text(url_lines(*[serve.url(f"/item/{i}?ref=r{i * 7}") for i in range(1000)]))
    summary = tmp_path / "s.json"
    r = run_hammer(["load", str(urls), "--loop", "-n", "6000", "-c", "4", "-t", "2",
                    "--max-key-memory", "256KiB", "--summary-json", str(summary)])
    assert r.returncode == 0, r.stderr
    assert len(r.records) == 6000
    assert len(set(rec.split("\t")[0] for rec in r.records)) == 1000
    s = summary_of(summary)
    rows = {k["key"]: k["requests"] for k in s["keys"]}
    assert rows == {serve.url("/item/{id}?ref={id}"): 6000}
    assert s["requests"] == s["succeeded"] == 6000
    jsonschema.validate(s, json.loads((ROOT / "docs" / "summary.schema.json").read_text()))
    folding = s["key_folding"]
    assert folding["reason"] == "max_key_memory"
    assert folding["max_key_memory_bytes"] == 256 * 1024
    assert folding["rows"] == 1 and folding["other_requests"] == 0
    assert not folding["quiet_rows_in_other"]
    assert 970 <= folding["distinct_keys_estimate"] <= 1030
    assert "distinct keys exceeded --max-key-memory 256KiB: grouped by path template into 1 row" \
        in r.stderr, r.stderr
    # --max-key-memory 0: no bound, every URL keeps its row.
    r = run_hammer(["load", str(urls), "--loop", "-n", "2000", "-c", "4", "-t", "2",
                    "--max-key-memory", "0", "--summary-json", str(summary)])
    assert r.returncode == 0, r.stderr
    s = summary_of(summary)
    assert len(s["keys"]) == 1000 and "key_folding" not in s
    assert sum(k["requests"] for k in s["keys"]) == 2000
    r = run_hammer(["load", str(urls), "--max-key-memory", "lots"])
    assert r.returncode == 2 and "--max-key-memory" in r.stderr


def test_stats_max_key_memory_folds_and_says_so(tmp_path):
    # hammer stats' report modes bound their rows' memory the same way: 300 keys' rows do not
    # fit in 16 KiB, their template's row (50 distinct latencies) does.
    src = tmp_path / "records.tsv"
    src.write_text("".join(f"http://127.0.0.1:9/item/{i % 300}\t0.{100 + i % 50:06d}\n"
                           for i in range(3000)))
    r = run_hammer(["stats", "--json", "--max-key-memory", "16KiB", str(src)])
    assert r.returncode == 0, r.stderr
    assert "exceeded --max-key-memory 16KiB: grouped by path template into 1 row" in r.stderr, \
        r.stderr
    s = json.loads(r.stdout)
    assert {k["key"]: k["requests"] for k in s["keys"]} == {"http://127.0.0.1:9/item/{id}": 3000}
    assert s["requests"] == 3000


def test_stats_tells_how_to_group_keys_of_one_record_each(tmp_path):
    # hammer stats' report modes say the same as hammer load of 150 keys with one record each:
    # after the table, on stderr for the others, as a note in the HTML report; not when the
    # keys are grouped (--key-pattern, --max-keys), nor in --reducer's exact lines.
    src = tmp_path / "records.tsv"
    src.write_text("".join(f"http://127.0.0.1:9/item/{i}?ref=r{i * 7}\t0.{100 + i % 50:06d}\n"
                           for i in range(150)))
    hint = ("each of the 150 keys had one request: group them into fewer rows with --key-pattern "
            "REGEX=NAME, or by path template with --max-keys below 150")
    r = run_hammer(["stats", "--table", str(src)])
    assert r.returncode == 0, r.stderr
    assert r.stdout.endswith(hint + "\n"), r.stdout
    html = tmp_path / "r.html"
    r = run_hammer(["stats", "--json", "--html", str(html), str(src)])
    assert r.returncode == 0, r.stderr
    assert "hammer stats: " + hint + "\n" in r.stderr, r.stderr
    assert json.loads(r.stdout)["requests"] == 150
    assert "Each of the 150 keys had one request" in html.read_text()
    r = run_hammer(["stats", "--table", "--key-pattern", "/item/[0-9]+=/item/:id", str(src)])
    assert r.returncode == 0, r.stderr
    assert "had one request" not in r.stdout + r.stderr
    # key, requests, ok, errors
    assert "/item/:id       150  150       0" in r.stdout, r.stdout
    r = run_hammer(["stats", "--table", "--max-keys", "100", str(src)])
    assert r.returncode == 0, r.stderr
    assert "had one request" not in r.stdout + r.stderr
    assert "exceeded --max-keys 100: grouped by path template into 1 row" in r.stdout, r.stdout
    r = run_hammer(["stats", "--reducer", str(src)])
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == 150 and "had one request" not in r.stderr
