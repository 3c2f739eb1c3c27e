"""`hammer load`'s command line as wrk, vegeta and k6 users write it: options before or after
the URLs and files, URLs as arguments, "did you mean" for a typo, compound durations, -d on a
finite list, '-' as stdout for every output flag, and requests that cannot be smuggled through
-H, --method or --body."""
import json
import re
import subprocess

import pytest

from harness import HAMMER, free_port, run_hammer, url_lines

# One valid value for every `hammer load` option that takes one, with what else it needs.
# test_every_value_option_is_covered fails when an option is added without an entry here, so
# the before/after test covers new options too.
SAMPLE_VALUES = {
    "--concurrency": ["2"],
    "--threads": ["1"],
    "--rate": ["50"],
    "--duration": ["1m30s"],
    "--stages": ["1s:10,1s:0"],
    "--warmup": ["100ms"],
    "--think-time": ["uniform:1ms,2ms"],
    "--requests": ["1"],
    "--shuffle-window": ["10"],
    "--seed": ["7"],
    "--timeout": ["1m"],
    "--connect-timeout": ["2s"],
    "--dns-ttl": ["2s"],
    "--error-pattern": ["oops"],
    "--emit": ["records"],
    "--header": ["X-Test: 1"],
    "--method": ["PUT"],
    "--body": ["payload"],
    "--cacert": ["/etc/ssl/certs/ca-certificates.crt"],
    "--summary-json": ["/dev/null"],
    "--html": ["/dev/null"],
    "--metrics-listen": ["127.0.0.1:0"],
    "--metrics-linger": ["1s", "--metrics-listen", "127.0.0.1:0"],
    "--remote-write": ["http://127.0.0.1:9/api/v1/write"],
    "--push-interval": ["2s", "--remote-write", "http://127.0.0.1:9/api/v1/write"],
    "--abort-grace": ["5s", "--abort-on-fail", "--threshold", "errors<1%"],
    "--fleet": ["zk://127.0.0.1:9/x", "--abort-on-fail", "--threshold", "errors<1%"],
    "--dashboard": [":0"],
    "--dashboard-linger": ["1s", "--dashboard", ":0"],
    "--start-at": ["1"],
    "--rate-total": ["100", "--workers", "2"],
    "--workers": ["2"],
    "--worker-index": ["0", "--workers", "2"],
    "--targets-format": ["lines"],
    "--key": ["path"],
    "--key-pattern": ["/item/[0-9]+=/item/:id"],
    "--max-keys": ["100"],
    "--max-key-memory": ["64MiB"],
    "--threshold": ["p99<1s"],
    "--max-redirects": ["3"],
    "--verbose": ["1"],
    "--max-streams": ["4", "--http2"],
}
# Options of request files (a jsonl entry with its capture time): sent as the same request.
REQUEST_FILE_OPTIONS = {
    "--speed": ["2", "--replay", "--targets-format", "jsonl"],
    "--base-url": ["http://127.0.0.1:9", "--targets-format", "jsonl"],
    "--split": ["0/1", "--targets-format", "jsonl"],
    "--split-by": ["url", "--split", "0/1", "--targets-format", "jsonl"],
}
# Options whose value replaces the positional input: both placements must give the same answer,
# the usage error that says so (which shows the positional was read as input both times).
REPLACES_INPUT = {"--har": ["x.har"]}


def value_options():
    """The long names of the options `hammer load --help` lists with a value (TYPE after it)."""
    out = subprocess.run([HAMMER, "load", "--help"], capture_output=True, text=True).stdout
    names = []
    for line in out.splitlines():
        m = re.match(r"\s+(?:-\w,)?(--[a-z0-9-]+) ([A-Z][A-Z|:]*)", line)
        if m:
            names.append(m.group(1))
    assert len(names) > 20, out
    return names


def test_every_value_option_is_covered():
    missing = [o for o in value_options()
               if o not in SAMPLE_VALUES and o not in REPLACES_INPUT and o not in REQUEST_FILE_OPTIONS]
    assert not missing, f"add a sample value for {missing} to SAMPLE_VALUES"


@pytest.mark.parametrize("option",
                         sorted(set(SAMPLE_VALUES) | set(REPLACES_INPUT) | set(REQUEST_FILE_OPTIONS)))
def test_value_option_before_or_after_the_input(option, tmp_path):
    assert option in value_options(), f"{option} is no longer an option of hammer load"
    urls = tmp_path / "urls.txt"
    if option in REQUEST_FILE_OPTIONS:
        urls.write_text('{"method":"GET","url":"http://127.0.0.1:9/item/1","ts":1000}\n')
    else:
        urls.write_text("http://127.0.0.1:9/item/1\n")
    value = SAMPLE_VALUES.get(option) or REPLACES_INPUT.get(option) or REQUEST_FILE_OPTIONS[option]
    common = ["--dry-run"]
    before = run_hammer(["load", *common, option, *value, str(urls)])
    after = run_hammer(["load", str(urls), *common, option, *value])
    assert (before.returncode, before.stdout, before.stderr) == \
        (after.returncode, after.stdout, after.stderr)
    if option in REPLACES_INPUT:
        assert after.returncode == 2 and "replaces the URL/FILE arguments" in after.stderr
    else:
        assert after.returncode == 0, after.stderr
        assert "/item/1 HTTP/1.1" in after.stdout, after.stdout


def test_repeated_list_options_take_one_value_each(tmp_path):
    urls = tmp_path / "urls.txt"
    urls.write_text("http://127.0.0.1:9/\n")
    r = run_hammer(["load", "--dry-run", "-H", "X-A: 1", "-H", "X-B: 2", str(urls), "-H", "X-C: 3"])
    assert r.returncode == 0, r.stderr
    assert all(h + "\n" in r.stdout for h in ("X-A: 1", "X-B: 2", "X-C: 3")), r.stdout


def test_urls_as_arguments_mixed_with_files(serve, tmp_path):
    listed = tmp_path / "more.txt"
    listed.write_text(url_lines(serve.url("/status/404"), serve.url("/bytes/10")))
    r = run_hammer(["load", serve.url("/"), serve.url("/echo"), str(listed), "-c", "1"])
    assert r.returncode == 0, r.stderr
    keys = [line.split("\t")[0] for line in r.records]
    assert sorted(keys) == sorted([serve.url("/"), serve.url("/echo"), serve.url("/status/404"),
                                   serve.url("/bytes/10")])
    assert serve.stats()["requests"] == 4
    r = run_hammer(["load", str(tmp_path / "absent.txt"), serve.url("/")])
    assert r.returncode == 2 and "cannot open" in r.stderr and "absent.txt" in r.stderr
    assert serve.stats()["requests"] == 4  # nothing sent when an input is missing


@pytest.mark.parametrize("command,typo,meant", [
    ("load", "--concurency", "--concurrency"),
    ("load", "--threshhold", "--threshold"),
    ("stats", "--tabel", "--table"),
    ("serve", "--lisen", "--listen"),
    ("dark", "--upstrem", "--upstream"),
    ("bulk", "--batch-doc", "--batch-docs"),
    ("route", "--shard", "--shards"),
    ("demo", "--duraton", "--duration"),
])
def test_unknown_option_suggests_the_closest(command, typo, meant):
    r = run_hammer([command, typo, "5"])
    assert r.returncode == 2
    assert f"unknown option '{typo}' (did you mean '{meant}'?)" in r.stderr, r.stderr
    assert f"try 'hammer {command} --help'" in r.stderr


@pytest.mark.parametrize("flag,hint", [
    ("-X", "(curl's -X is '--method' here)"),
    ("-z", "(hey's and oha's -z is '-d' (--duration) here)"),
    ("-R", "(wrk2's -R is '-r' (--rate) here)"),
    ("-x", ""),  # no meaning known, and no spelling guess for one letter: not "-h"
])
def test_an_unknown_short_flag_is_named_by_meaning_or_not_at_all(flag, hint):
    r = run_hammer(["load", flag, "POST", "http://127.0.0.1:9/"])
    assert r.returncode == 2
    line = next(line for line in r.stderr.splitlines() if "unknown option" in line)
    assert line.endswith(f"unknown option '{flag}'" + (" " + hint if hint else "")), r.stderr
    assert "did you mean" not in r.stderr


def test_dark_listens_on_a_bare_port_as_loopback_like_admin():
    port = free_port()
    proc = subprocess.Popen([HAMMER, "dark", "--listen", str(port), "--admin", "0", "--upstream",
                             "http://127.0.0.1:9"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        address = proc.stdout.readline().strip()
        admin = proc.stdout.readline().strip()
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert address == f"127.0.0.1:{port}", err
    assert admin.startswith("127.0.0.1:"), err


def test_requests_count_replays_a_single_url_until_n_as_hey_does(serve):
    r = run_hammer(["load", "-n", "200", "-c", "10", serve.url("/")])
    assert r.returncode == 0, r.stderr
    assert len(r.successes()) == 200
    assert serve.stats()["requests"] == 200
    assert ("hammer load: replaying the input until 200 requests (--requests; as hey does, the "
            "list is sent again from its start when it ends)") in r.stderr


def test_a_url_without_its_scheme_is_named_as_such():
    r = run_hammer(["load", "127.0.0.1:18400/"])
    assert r.returncode == 2, r.stderr
    assert ("'127.0.0.1:18400/' is neither a file nor a URL: a URL needs its scheme "
            "(http://127.0.0.1:18400/)") in r.stderr


@pytest.mark.parametrize("extra", [[], ["-d", "2s"]])
def test_an_input_without_requests_is_an_error(tmp_path, extra):
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing here\n\n")
    r = run_hammer(["load", str(empty), *extra])
    assert r.returncode == 2, r.stderr
    assert f"no requests in {empty} (only blank lines and # comments, or nothing)" in r.stderr


def test_compound_durations(serve, tmp_path):
    summary = tmp_path / "s.json"
    r = run_hammer(["load", serve.url("/"), "-d", "1s200ms", "--rate", "50", "-c", "4",
                    "--summary-json", str(summary)])
    assert r.returncode == 0, r.stderr
    s = json.loads(summary.read_text())
    # 50/s for 1.2 s: 60 due before the end (the last at 1.18 s), each sent or counted as
    # dropped (due while every slot was busy on a loaded machine).
    assert s["requests"] + s["dropped"] == 60
    assert s["requests"] == len(r.records) == serve.stats()["requests"]
    r = run_hammer(["load", serve.url("/"), "-d", "1m30"])
    assert r.returncode == 2 and "1m30s" in r.stderr


def test_duration_replays_a_finite_list_and_says_so(serve):
    urls = [serve.url("/"), serve.url("/bytes/1"), serve.url("/echo")]
    r = run_hammer(["load", "-", "-d", "500ms", "-c", "1", "-t", "1"], input_text=url_lines(*urls))
    assert r.returncode == 0, r.stderr
    assert "replaying the input for 500ms" in r.stderr
    assert len(r.records) > len(urls)
    assert serve.stats()["requests"] == len(r.records)
    # In input order, pass after pass.
    keys = [line.split("\t")[0] for line in r.records]
    assert keys == [urls[i % 3] for i in range(len(keys))]


def test_dash_is_stdout_for_every_output_flag(serve, tmp_path):
    r = run_hammer(["load", serve.url("/"), "--emit", "none", "--summary-json", "-"])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["requests"] == 1
    assert not (tmp_path / "-").exists()
    r = run_hammer(["load", serve.url("/"), "--emit", "none", "--html", "-"])
    assert r.returncode == 0 and r.stdout.lstrip().startswith("<!DOCTYPE html>"), r.stdout[:200]
    records = tmp_path / "records.tsv"
    records.write_text(f"{serve.url('/')}\t0.001\n")
    r = run_hammer(["stats", str(records), "--html", "-"])
    assert r.returncode == 0 and r.stdout.lstrip().startswith("<!DOCTYPE html>"), r.stdout[:200]
    r = run_hammer(["stats", str(records), "--hdr-log", "-"])
    assert r.returncode == 0 and "#[Histogram log format version" in r.stdout, r.stdout[:200]


@pytest.mark.parametrize("args,message", [
    (["-H", "X-A: 1\r\nX-Injected: 1"], "may not contain CR, LF or NUL"),
    (["-H", "X-A: 1\nGET /second HTTP/1.1"], "may not contain CR, LF or NUL"),
    (["--method", "GET / HTTP/1.1\r\nX: y\r\n\r\nGET"], "is not a method name"),
    (["--method", "GET\n"], "is not a method name"),
    (["--body", "a\r\n\r\nGET /smuggled HTTP/1.1"], "CR, LF or NUL in an inline body"),
    (["-H", "Content-Length: 5"], "Content-Length is hammer's to set"),
    (["-H", "transfer-encoding: chunked"], "transfer-encoding is hammer's to set"),
    (["-H", "Host: a.test", "-H", "host: b.test"], "Host given twice"),
    (["-H", "Bad Name: x"], "is not a header name"),
])
def test_smuggling_through_flags_is_a_usage_error(serve, args, message):
    r = run_hammer(["load", serve.url("/echo"), *args])
    assert r.returncode == 2, r.stderr
    assert message in r.stderr, r.stderr
    assert serve.stats()["requests"] == 0


def test_host_header_replaces_hammers_own(serve):
    r = run_hammer(["load", serve.url("/echo"), "--dry-run", "-H", "Host: api.example.test"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("Host: ") == 1 and "Host: api.example.test\n" in r.stdout


def test_request_file_framing_headers_are_reconciled(serve, tmp_path):
    """A vegeta request file's own Content-Length or Transfer-Encoding never frames the body:
    hammer's Content-Length does, so the connection stays in step."""
    body = tmp_path / "body.txt"
    body.write_text("abc")
    targets = tmp_path / "targets.txt"
    targets.write_text(f"POST {serve.url('/echo')}\nContent-Length: 100\n@{body}\n\n"
                       f"POST {serve.url('/echo')}\nTransfer-Encoding: chunked\n@{body}\n\n")
    r = run_hammer(["load", str(targets), "--targets-format", "vegeta", "--dry-run"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("Content-Length: 3\n") == 2, r.stdout
    assert "Content-Length: 100" not in r.stdout and "Transfer-Encoding" not in r.stdout
    r = run_hammer(["load", str(targets), "--targets-format", "vegeta", "-c", "1", "-t", "1",
                    "--summary-json", "-", "--emit", "none"])
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["succeeded"] == 2 and s["failed"] == 0, r.stderr
    assert serve.stats()["requests"] == 2


def test_a_report_on_stdout_keeps_the_records_out_of_it(serve):
    """`--summary-json - | jq` must parse: with a report on stdout, records are not written
    there unless asked for, and asking for both is a usage error naming the two."""
    r = run_hammer(["load", serve.url("/"), "--summary-json", "-"])  # stdout is a pipe
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["requests"] == 1, r.stdout
    r = run_hammer(["load", serve.url("/"), "--html", "-"])
    assert r.returncode == 0 and r.stdout.lstrip().startswith("<!DOCTYPE html>"), r.stdout[:200]
    for asked in (["--emit", "records"], ["--records"], ["--emit", "partials"]):
        r = run_hammer(["load", serve.url("/"), "--summary-json", "-", *asked])
        assert r.returncode == 2, r.stderr
        assert f"--summary-json - and {' '.join(asked)} both write to standard output" in r.stderr
    assert serve.stats()["requests"] == 2  # the refused runs sent nothing
