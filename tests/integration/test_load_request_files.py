"""`hammer load` request files (vegeta targets, JSON lines): methods, headers and bodies arrive at
nginx exactly as written (its access log), byte for byte for binary bodies; malformed files are
usage errors naming the file and line."""
import base64
import json

import pytest

from harness import run_hammer


BODY_JSON = '{"name": "café \\"quoted\\"", "n": 1}\n'
BODY_FORM = "a=1&b=two words\twith tab\nand a second line"


def test_vegeta_file_headers_and_bodies_arrive_as_written(logged, serve, tmp_path):
    (tmp_path / "bodies").mkdir()
    (tmp_path / "bodies" / "one.json").write_text(BODY_JSON, encoding="utf-8")
    (tmp_path / "form.txt").write_text(BODY_FORM)
    targets = tmp_path / "targets.vegeta"
    targets.write_text(
        "# a vegeta targets file\n"
        f"POST {logged.url('/echo')}\n"
        "Content-Type: application/json\n"
        "X-Test: vegeta-one\n"
        "@bodies/one.json\n"
        "\n"
        f"PUT {logged.url('/echo')}\n"
        "X-Test: vegeta-two\n"
        "Content-Type: text/plain; charset=utf-8\n"
        f"@{tmp_path / 'form.txt'}\n"
        "\n"
        f"GET {logged.url('/echo')}\n"
        "X-Test: vegeta-three\n"
        f"DELETE {logged.url('/echo')}\n")
    r = run_hammer(["load", str(targets), "--targets-format", "vegeta", "-c", "1", "-t", "1",
                    "-H", "X-Global: g"])
    assert r.returncode == 0, r.stderr
    assert len(r.successes()) == 4, r.stderr
    log = logged.log.entries()
    got = [(e["m"], e["u"], e["x"], e["g"], e["ct"], e["b"]) for e in log]
    assert got == [
        ("POST", "/echo", "vegeta-one", "g", "application/json", BODY_JSON),
        ("PUT", "/echo", "vegeta-two", "g", "text/plain; charset=utf-8", BODY_FORM),
        ("GET", "/echo", "vegeta-three", "g", "", ""),
        ("DELETE", "/echo", "", "g", "", ""),
    ]
    assert [e["cl"] for e in log[:2]] == [str(len(BODY_JSON.encode())), str(len(BODY_FORM))]
    assert serve.stats()["by_method"] == {"POST": 1, "PUT": 1, "GET": 1, "DELETE": 1}


def test_jsonl_file_headers_and_bodies_arrive_as_written(logged, serve, tmp_path):
    def b64(text):
        return base64.b64encode(text.encode()).decode()

    rows = [
        {"method": "POST", "url": logged.url("/echo"),
         "header": {"X-Test": ["jsonl-one"], "Content-Type": ["application/json"]},
         "body": b64(BODY_JSON)},
        {"method": "PATCH", "url": logged.url("/echo?q=1"),
         "header": {"X-Test": ["jsonl-two"], "Authorization": ["Bearer t0ken"]},
         "body": b64(BODY_FORM)},
        {"method": "GET", "url": logged.url("/echo"), "header": {"X-Test": ["jsonl-three"]}},
        {"method": "HEAD", "url": logged.url("/echo"), "header": None, "body": None},
    ]
    targets = tmp_path / "targets.jsonl"
    targets.write_text("\n".join(json.dumps(row) for row in rows) + "\n\n")
    r = run_hammer(["load", str(targets), "--targets-format", "jsonl", "-c", "1", "-t", "1"])
    assert r.returncode == 0, r.stderr
    assert len(r.successes()) == 4, r.stderr
    log = logged.log.entries()
    got = [(e["m"], e["u"], e["x"], e["ct"], e["auth"], e["b"]) for e in log]
    assert got == [
        ("POST", "/echo", "jsonl-one", "application/json", "", BODY_JSON),
        ("PATCH", "/echo?q=1", "jsonl-two", "", "Bearer t0ken", BODY_FORM),
        ("GET", "/echo", "jsonl-three", "", "", ""),
        ("HEAD", "/echo", "", "", "", ""),
    ]
    assert serve.stats()["by_method"] == {"POST": 1, "PATCH": 1, "GET": 1, "HEAD": 1}


def test_binary_bodies_are_sent_byte_for_byte(logged, tmp_path):
    blob = bytes(range(256)) * 4
    (tmp_path / "blob.bin").write_bytes(blob)
    vegeta = tmp_path / "t.vegeta"
    vegeta.write_text(f"POST {logged.url('/echo')}\nX-Test: vegeta\n@blob.bin\n")
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text(json.dumps({"method": "POST", "url": logged.url("/echo"),
                                 "header": {"X-Test": ["jsonl"]},
                                 "body": base64.b64encode(blob).decode()}) + "\n")
    for path, fmt in ((vegeta, "vegeta"), (jsonl, "jsonl")):
        r = run_hammer(["load", str(path), "--targets-format", fmt, "-c", "1", "-t", "1"])
        assert r.returncode == 0 and len(r.successes()) == 1, r.stderr
    log = logged.log.entries()
    assert [(e["x"], e["cl"]) for e in log] == [("vegeta", "1024"), ("jsonl", "1024")]
    # nginx's escape=json writes bytes >= 0x80 as they are: compare the bytes.
    assert [e["b"].encode("utf-8", "surrogateescape") for e in log] == [blob, blob]


@pytest.mark.parametrize("fmt,text,line,why", [
    ("vegeta", "GET {u}\nX-Ok: 1\n\nGET {u}\nthis is not a header\n", 5, "expected 'Name: value'"),
    ("vegeta", "# comment\n\nPOST {u}\n@missing-body.bin\n", 4, "body file 'missing-body.bin'"),
    ("vegeta", "GET {u}\n\nGET not-a-url\n", 3, ""),
    ("vegeta", "X-Header-First: 1\nGET {u}\n", 1, "expected 'METHOD URL'"),
    ("jsonl", '{{"method":"GET","url":"{u}"}}\n{{"method":"GET","url":\n', 2, "invalid JSON"),
    ("jsonl", '\n{{"method":"GET"}}\n', 2, "'url' is missing"),
    ("jsonl", '{{"method":"GET","url":"{u}","body":"!!!"}}\n', 1, "'body' is not base64"),
    ("jsonl", '{{"method":"GET","url":"{u}","header":{{"X":"not-a-list"}}}}\n', 1,
     "must be an array of strings"),
    ("jsonl", '[1, 2]\n', 1, "expected a JSON object"),
])
def test_malformed_request_files_name_the_file_and_line(serve, tmp_path, fmt, text, line, why):
    path = tmp_path / f"bad.{fmt}"
    path.write_text(text.format(u=serve.url("/")))
    r = run_hammer(["load", str(path), "--targets-format", fmt, "-c", "1", "-t", "1"])
    assert r.returncode == 2, r.stderr
    message = [m for m in r.stderr.splitlines() if m.startswith("hammer load: ")]
    assert message and message[-1].startswith(f"hammer load: {path}:{line}: "), r.stderr
    assert why in message[-1], r.stderr
