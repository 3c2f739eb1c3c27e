"""`hammer dark --capture` records the traffic it serves; `hammer load --replay` sends it again
with its original timing (issue 47, items 1, 2 and 5).

Real clients: curl over HTTP/1.1, HTTP/2 (h2c) and HTTPS (HTTP/1.1 and HTTP/2 by ALPN) through
the proxy to `hammer serve`; the capture is then replayed with --base-url against nginx, whose
JSON access log (logged_nginx.py) shows what arrived: method, path, body, order and time.
"""
import hashlib
import json
import os
import signal
import stat
import subprocess
import time

from harness import HAMMER, run_hammer, wait_for
from logged_nginx import LoggedNginx
from prerequisites import require_program


def curl(*args):
    r = subprocess.run(["curl", "-sS", "--max-time", "10", "-o", os.devnull, "-w",
                        "%{http_version} %{response_code}", *args], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def capture_lines(path):
    text = path.read_bytes().decode()
    assert text.endswith("\n"), text[-200:]
    return [json.loads(line) for line in text.splitlines()]


def body_hash(data):
    return hashlib.sha256(data).hexdigest()


def logged_body(entry):
    """The request body nginx logged (escape=json), as the bytes it received."""
    return entry["b"].encode("utf-8", "surrogateescape")


def test_curl_traffic_is_captured_and_replayed_in_order_to_nginx(serve, proxies, pki, logged,
                                                                 tmp_path):
    require_program("curl", "curl")
    plain_file, tls_file = tmp_path / "plain.jsonl", tmp_path / "tls.jsonl"
    plain = proxies("--http2", "--upstream", f"http://{serve.address}", "--capture",
                    str(plain_file))
    tls = proxies("--http2", "--upstream", f"http://{serve.address}", "--tls-cert",
                  str(pki.server_cert), "--tls-key", str(pki.server_key), "--capture",
                  str(tls_file))
    https = f"https://127.0.0.1:{tls.port}"
    binary = bytes(range(256)) * 4
    (tmp_path / "binary").write_bytes(binary)
    # (client, method, path, body): one request each, a gap between them for the schedule.
    sent = [
        (["--http1.1", plain.url("/replay/one?q=1")], "GET", "/replay/one?q=1", b""),
        (["--http1.1", "-H", "Content-Type: text/plain", "--data-binary", "alpha body",
          plain.url("/echo")], "POST", "/echo", b"alpha body"),
        (["--http2-prior-knowledge", "-H", "Content-Type: application/octet-stream",
          "--data-binary", f"@{tmp_path / 'binary'}", plain.url("/echo")], "POST", "/echo",
         binary),
        (["--http1.1", "--cacert", str(pki.ca), "-X", "PUT", "-H",
          "Content-Type: application/json", "--data-binary", '{"k":"v"}', https + "/echo"],
         "PUT", "/echo", b'{"k":"v"}'),
        (["--http2", "--cacert", str(pki.ca), https + "/replay/five"], "GET", "/replay/five",
         b""),
        (["--http2", "--cacert", str(pki.ca), "--data-binary", "omega", https + "/echo"],
         "POST", "/echo", b"omega"),
    ]
    versions = []
    for args, *_ in sent:
        versions.append(curl(*args))
        time.sleep(0.15)  # spaces the recorded schedule; nothing waits on it
    assert versions == ["1.1 200", "1.1 200", "2 200", "1.1 200", "2 200", "2 200"]
    plain.wait_for_metric("hammer_dark_capture_lines_total", lambda v: v == 3)
    plain.stop()
    tls.stop()
    assert "capture " + str(plain_file) + ": lines written 3" in plain.stderr

    for path in (plain_file, tls_file):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    captured = sorted(capture_lines(plain_file) + capture_lines(tls_file), key=lambda e: e["ts"])
    assert [e["protocol"] for e in captured] == ["HTTP/1.1", "HTTP/1.1", "HTTP/2", "HTTP/1.1",
                                                 "HTTP/2", "HTTP/2"]
    assert [e["url"].split("://")[0] for e in captured] == ["http"] * 3 + ["https"] * 3
    assert [e["method"] for e in captured] == [m for _, m, _, _ in sent]
    assert all(e["status"] == 200 and e["latency_us"] > 0 for e in captured)
    assert captured[2]["body_binary"] is True
    assert "body_binary" not in captured[1]

    # The two files as one, in the order they were written: the reader puts them in arrival
    # order itself.
    replay = tmp_path / "replay.jsonl"
    replay.write_bytes(plain_file.read_bytes() + tls_file.read_bytes())
    logged.log.clear()
    r = run_hammer(["load", "--targets-format", "jsonl", "--replay", "--base-url",
                    logged.url(), "--emit", "none", str(replay)])
    assert r.returncode == 0, r.stderr
    received = logged.log.entries()
    assert [(e["m"], e["u"]) for e in received] == [(m, p) for _, m, p, _ in sent]
    assert [body_hash(logged_body(e)) for e in received] == [body_hash(b) for *_, b in sent]


def recorded_gets(proxies, serve, tmp_path, count=6, gap=0.25):
    """A capture of `count` GETs made by curl `gap` seconds apart; its path."""
    capture = tmp_path / "gets.jsonl"
    proxy = proxies("--upstream", f"http://{serve.address}", "--capture", str(capture))
    for i in range(count):
        curl(proxy.url(f"/timed/{i}"))
        time.sleep(gap)  # shapes the recorded schedule; nothing waits on it
    proxy.stop()
    return capture


def logged_span(logged, paths):
    entries = logged.log.entries()
    assert [e["u"] for e in entries] == paths
    times = [float(e["t"]) for e in entries]
    return times[-1] - times[0]


def test_replay_keeps_the_recorded_gaps_at_speed_1_and_4(serve, proxies, start_nginx, tmp_path):
    require_program("curl", "curl")
    capture = recorded_gets(proxies, serve, tmp_path)
    entries = capture_lines(capture)
    recorded = (entries[-1]["ts"] - entries[0]["ts"]) / 1e6
    paths = [f"/timed/{i}" for i in range(6)]
    logged = LoggedNginx(start_nginx, serve, tmp_path)
    spans = {}
    for speed in (1, 4):
        logged.log.clear()
        r = run_hammer(["load", "--targets-format", "jsonl", "--replay", "--speed", str(speed),
                        "--base-url", logged.url(), "--emit", "none", str(capture)])
        assert r.returncode == 0, r.stderr
        spans[speed] = logged_span(logged, paths)
        expected = recorded / speed
        # Loose: nginx logs in whole milliseconds, and a loaded machine delays single sends.
        assert abs(spans[speed] - expected) < 0.25 * expected + 0.1, (speed, spans, recorded)
    assert spans[1] > 2.5 * spans[4], spans


def test_loop_repeats_the_schedule(serve, proxies, start_nginx, tmp_path):
    require_program("curl", "curl")
    capture = recorded_gets(proxies, serve, tmp_path, count=3, gap=0.2)
    logged = LoggedNginx(start_nginx, serve, tmp_path)
    # One slot: a pass starts 1 ms after the last entry of the one before, and the log must
    # show the passes one after the other.
    r = run_hammer(["load", "--targets-format", "jsonl", "--replay", "--speed", "2", "--loop",
                    "--requests", "7", "--concurrency", "1", "--base-url", logged.url(),
                    "--emit", "none", str(capture)])
    assert r.returncode == 0, r.stderr
    assert [e["u"] for e in logged.log.entries()] == [f"/timed/{i % 3}" for i in range(7)]


def test_secrets_are_redacted_by_default(serve, proxies, tmp_path):
    require_program("curl", "curl")
    capture = tmp_path / "secrets.jsonl"
    proxy = proxies("--upstream", f"http://{serve.address}", "--capture", str(capture),
                    "--capture-redact", "X-Session", "--capture-keep", "sig")
    curl("-H", "Authorization: Bearer s3cret-auth", "-H", "Proxy-Authorization: Basic s3cret-pa",
         "-H", "Cookie: sid=s3cret-cookie", "-H", "X-Api-Key: s3cret-key", "-H",
         "X-Session: s3cret-session", "-H", "X-Visible: shown",
         proxy.url("/p?token=s3cret-t&key=s3cret-k&password=s3cret-pw&sig=kept-sig&page=2"))
    proxy.stop()
    text = capture.read_text()
    assert "s3cret" not in text, text
    [entry] = capture_lines(capture)
    assert entry["url"].endswith(
        "/p?token=REDACTED&key=REDACTED&password=REDACTED&sig=kept-sig&page=2")
    header = {name.lower(): values for name, values in entry["header"].items()}
    for name in ("authorization", "cookie", "x-api-key", "x-session"):
        assert header[name] == ["REDACTED"], (name, header)
    # Proxy-Authorization is hop-by-hop: the proxy does not pass it on, nor record it.
    assert "proxy-authorization" not in header
    assert header["x-visible"] == ["shown"]
    assert stat.S_IMODE(capture.stat().st_mode) == 0o600


def test_kill_9_while_capturing_leaves_only_complete_lines(serve, proxies, tmp_path):
    capture = tmp_path / "killed.jsonl"
    proxy = proxies("--threads", "2", "--upstream", f"http://{serve.address}", "--capture",
                    str(capture))
    urls = tmp_path / "urls.txt"
    urls.write_text("".join(f"POST {proxy.url(f'/echo?i={i}')}\n" for i in range(100)))
    load = subprocess.Popen([HAMMER, "load", "--concurrency", "16", "--duration", "20s",
                             "--body", "x" * 3000, "--emit", "none", str(urls)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: capture.exists() and capture.stat().st_size > 2_000_000, timeout=30,
                 what="2 MB of capture")
        proxy.proc.send_signal(signal.SIGKILL)
        proxy.proc.wait(timeout=10)
    finally:
        load.kill()
        load.wait()
    # Each batch of whole lines is one write(2), but kill -9 can cut a write to a regular file
    # at a page boundary: the file is whole lines, then at most the start of one more.
    text = capture.read_bytes().decode()
    whole, _, cut = text.rpartition("\n")
    lines = [json.loads(line) for line in whole.split("\n")]
    assert len(lines) > 300  # 2 MB of lines of about 4.3 KB
    assert all(e["method"] == "POST" and e["body"] for e in lines)
    # hammer load sends every whole line once, and says so when it dropped a cut one.
    summary = tmp_path / "summary.json"
    r = run_hammer(["load", "--targets-format", "jsonl", "--base-url", f"http://{serve.address}",
                    "--summary-json", str(summary), "--emit", "none", str(capture)])
    assert r.returncode == 0, r.stderr
    assert json.loads(summary.read_text())["succeeded"] == len(lines)
    assert ("is not whole JSON (a writer killed mid-write?): dropped" in r.stderr) == bool(cut), \
        (cut[:100], r.stderr)
