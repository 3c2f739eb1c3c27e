"""`hammer dark --capture FILE.jsonl.zst` writes the capture zstd-compressed (issue 47, item 1):
`zstdcat` reads it, `hammer load` reads it as it is, a file cut inside its last frame is read up
to its last complete line, and a kill -9 leaves a file that decodes to complete lines.
"""
import json
import signal
import subprocess
import time

from harness import HAMMER, run_hammer, wait_for
from logged_nginx import LoggedNginx
from prerequisites import require_program
from test_dark_capture import curl

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def zstdcat(path):
    """(the decoded text, zstdcat's exit status, its stderr)."""
    r = subprocess.run(["zstdcat", str(path)], capture_output=True, timeout=60)
    return r.stdout.decode(), r.returncode, r.stderr.decode()


def test_a_compressed_capture_reads_with_zstdcat_and_replays(serve, proxies, start_nginx,
                                                              tmp_path):
    require_program("curl", "curl")
    require_program("zstdcat", "zstd")
    capture = tmp_path / "traffic.jsonl.zst"
    proxy = proxies("--upstream", f"http://{serve.address}", "--capture", str(capture))
    sent = [("GET", "/z/0?q=1"), ("POST", "/echo"), ("PUT", "/echo"), ("GET", "/z/3")]
    for method, path in sent:
        args = ["-X", method] + (["--data-binary", f"{method} body"] if method != "GET" else [])
        assert curl(*args, proxy.url(path)) == "1.1 200"
        time.sleep(0.05)  # spaces the recorded schedule; nothing waits on it
    proxy.wait_for_metric("hammer_dark_capture_lines_total", lambda v: v == len(sent))
    proxy.stop()

    data = capture.read_bytes()
    assert data.startswith(ZSTD_MAGIC)
    text, status, err = zstdcat(capture)
    assert status == 0, err
    entries = [json.loads(line) for line in text.splitlines()]
    assert [(e["method"], e["url"].split(str(proxy.port), 1)[1]) for e in entries] == sent

    logged = LoggedNginx(start_nginx, serve, tmp_path)
    r = run_hammer(["load", "--targets-format", "jsonl", "--replay", "--speed", "4",
                    "--base-url", logged.url(), "--emit", "none", str(capture)])
    assert r.returncode == 0, r.stderr
    assert "cut" not in r.stderr, r.stderr
    assert [(e["m"], e["u"]) for e in logged.log.entries()] == sent

    # Cut in the middle of the last frame: the lines of the frames before it are replayed and
    # the run says the file was cut.
    last_frame = data.rfind(ZSTD_MAGIC)
    assert last_frame > 0, "every write is a frame: four requests, more than one write"
    whole = tmp_path / "whole.jsonl.zst"
    whole.write_bytes(data[:last_frame])
    kept = [json.loads(line) for line in zstdcat(whole)[0].splitlines()]
    cut = tmp_path / "cut.jsonl.zst"
    cut.write_bytes(data[:last_frame + (len(data) - last_frame) // 2])
    logged.log.clear()
    r = run_hammer(["load", "--targets-format", "jsonl", "--replay", "--speed", "4",
                    "--base-url", logged.url(), "--emit", "none", str(cut)])
    assert r.returncode == 0, r.stderr
    assert [(e["m"], e["u"]) for e in logged.log.entries()] == sent[:len(kept)]
    assert "cut.jsonl.zst ends inside a zstd frame" in r.stderr, r.stderr


def test_kill_9_leaves_a_compressed_capture_of_complete_lines(serve, proxies, tmp_path):
    require_program("zstdcat", "zstd")
    capture = tmp_path / "killed.jsonl.zst"
    proxy = proxies("--threads", "2", "--upstream", f"http://{serve.address}", "--capture",
                    str(capture))
    urls = tmp_path / "urls.txt"
    urls.write_text("".join(f"POST {proxy.url(f'/echo?i={i}')}\n" for i in range(100)))
    load = subprocess.Popen([HAMMER, "load", "--concurrency", "16", "--duration", "20s",
                             "--body", "".join(chr(33 + (i * 7919) % 90) for i in range(3000)),
                             "--emit", "none", str(urls)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: capture.exists() and capture.stat().st_size > 100_000, timeout=30,
                 what="100 kB of compressed capture")
        proxy.proc.send_signal(signal.SIGKILL)
        proxy.proc.wait(timeout=10)
    finally:
        load.kill()
        load.wait()
    text, status, err = zstdcat(capture)
    # A frame cut by the kill decodes to nothing: zstdcat then reports the truncation.
    assert status == 0 or "truncated" in err.lower() or "premature" in err.lower(), err
    assert text.endswith("\n"), text[-200:]
    lines = [json.loads(line) for line in text.splitlines()]
    assert len(lines) > 100
    assert all(e["method"] == "POST" and e["body"] for e in lines)

    # hammer load reads the same lines: each sent once to `hammer serve`.
    summary = tmp_path / "summary.json"
    r = run_hammer(["load", "--targets-format", "jsonl", "--base-url", f"http://{serve.address}",
                    "--summary-json", str(summary), "--emit", "none", str(capture)])
    assert r.returncode == 0, r.stderr
    assert json.loads(summary.read_text())["succeeded"] == len(lines)
