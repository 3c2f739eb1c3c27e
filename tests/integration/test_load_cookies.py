"""`hammer load --cookies`: a cookie jar per slot, against `hammer serve` and against nginx (what
nginx received is read from its access log)."""
from harness import run_hammer, url_lines


def test_cookies_from_hammer_serve_need_the_jar(serve):
    check, set_ = serve.url("/cookie/check"), serve.url("/cookie/set")
    # One slot: it sees the requests in order, and keeps what /cookie/set gave it.
    r = run_hammer(["load", "--hadoop-counters", "-", "-c", "1", "-t", "1", "--cookies"],
                   input_text=url_lines(check, set_, check, check))
    assert r.returncode == 0, r.stderr
    assert [rec.endswith("\t") for rec in r.records] == [True, False, False, False], r.records
    assert r.error_counter("http_4xx") == 1
    # Without --cookies nothing is kept.
    r = run_hammer(["load", "--hadoop-counters", "-", "-c", "1", "-t", "1"], input_text=url_lines(set_, check))
    assert r.records[0].startswith(set_ + "\t0.") and r.records[1] == check + "\t"
    assert r.error_counter("http_4xx") == 1


def test_cookies_set_by_nginx_then_required(logged):
    login, private = logged.url("/login"), logged.url("/private")
    r = run_hammer(["load", "--hadoop-counters", "-", "-c", "1", "-t", "1", "--cookies"],
                   input_text=url_lines(private, login, private))
    assert r.returncode == 0, r.stderr
    assert [rec.endswith("\t") for rec in r.records] == [True, False, False], r.records
    assert r.error_counter("http_4xx") == 1
    log = logged.log.entries()
    assert [(e["u"], e["s"], e["ck"]) for e in log] == [
        ("/private", "403", ""), ("/login", "200", ""), ("/private", "200", "sid=abc")]

    logged.log.clear()
    r = run_hammer(["load", "--hadoop-counters", "-", "-c", "1", "-t", "1"], input_text=url_lines(login, private))
    assert r.records[1] == private + "\t" and r.error_counter("http_4xx") == 1
    assert [e["ck"] for e in logged.log.entries()] == ["", ""]


BODY_JSON = '{"name": "café \\"quoted\\"", "n": 1}\n'
BODY_FORM = "a=1&b=two words\twith tab\nand a second line"
