"""`hammer load` following redirects: counts per request, cycles, --max-redirects, and nginx's
relative and absolute redirect chains checked in its access log."""
from harness import run_hammer, summary_of, url_lines


def test_redirects_followed_with_a_count_per_request(serve, tmp_path):
    summary = tmp_path / "s.json"
    r = run_hammer(["load", "-", "-c", "2", "-t", "1", "--summary-json", str(summary)],
                   input_text=url_lines(*[serve.url("/redirect/3")] * 5))
    assert r.returncode == 0, r.stderr
    assert r.records and all(rec.startswith(serve.url("/redirect/3") + "\t0.")
                             for rec in r.records), r.records
    s = summary_of(summary)
    assert (s["succeeded"], s["redirects"]) == (5, 15), s
    assert serve.stats()["requests"] == 5 * 4  # /redirect/3, /2, /1, then the target
    assert "redirects    15 followed" in r.stderr


def test_redirect_loop_and_too_many_redirects(serve, tmp_path):
    r = run_hammer(["load", "--hadoop-counters", "-", "-c", "1", "-t", "1"],
                   input_text=url_lines(serve.url("/redirect-loop"), serve.url("/redirect-loop")))
    assert r.returncode == 0, r.stderr
    assert r.error_counter("redirect_loop") == 2 and not r.successes()
    assert "redirect cycle back to " + serve.url("/redirect-loop") in r.stderr
    # A chain longer than --max-redirects fails the same way.
    r = run_hammer(["load", "--hadoop-counters", "-", "-c", "1", "-t", "1", "--max-redirects", "2"],
                   input_text=url_lines(serve.url("/redirect/3")))
    assert r.failures() == [serve.url("/redirect/3") + "\t"]
    assert r.error_counter("redirect_loop") == 1


def test_max_redirects_zero_takes_the_302_as_the_answer(serve, tmp_path):
    summary = tmp_path / "s.json"
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--max-redirects", "0",
                    "--summary-json", str(summary)],
                   input_text=url_lines(serve.url("/redirect/3"), serve.url("/redirect-loop")))
    assert r.returncode == 0, r.stderr
    assert len(r.successes()) == 2, r.stderr
    assert summary_of(summary)["redirects"] == 0
    assert serve.stats()["requests"] == 2  # nothing followed


def test_nginx_redirect_chains_relative_and_absolute(logged, tmp_path):
    summary = tmp_path / "s.json"
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--summary-json", str(summary)],
                   input_text=url_lines(logged.url("/chain/a"), logged.url("/chain/a"),
                                    logged.url("/loop/x")))
    assert r.returncode == 0, r.stderr
    assert len(r.records) == 3, r.records
    assert all(rec.startswith(logged.url("/chain/a") + "\t0.") for rec in r.records[:2])
    assert r.records[2] == logged.url("/loop/x") + "\t"
    s = summary_of(summary)
    # 2 per chain, and /loop/x -> /loop/y was followed before /loop/y -> /loop/x closed the cycle.
    assert (s["succeeded"], s["failures"], s["redirects"]) == (2, {"redirect_loop": 1}, 5), s
    log = logged.log.entries()
    assert [(e["u"], e["s"]) for e in log] == [
        ("/chain/a", "301"), ("/chain/b", "302"), ("/chain/c", "200")] * 2 + [
        ("/loop/x", "301"), ("/loop/y", "302")]
