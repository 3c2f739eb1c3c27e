"""Output sinks that fail under load, stats, route and bulk: a disk that fills up (a real tmpfs
of a few KiB, ENOSPC), /dev/full, a pipe whose reader goes away (`| head -1`, EPIPE) and a
terminal that hangs up (EIO). Every command exits non-zero with a message naming what it could
not write, never dies of SIGPIPE, leaves an output file either as it was or whole (no truncated
file in place of the earlier one, no temporary file beside it), and accounts for every request
it sent.

The tmpfs is mounted in a mount namespace of the test's own (`unshare --mount
--map-root-user`, util-linux), so no root is needed where user namespaces are allowed; the
namespace and its mount end with the command run in it."""
import json
import os
import pty
import re
import select
import subprocess
import sys
import tty

from harness import HAMMER, url_lines
from opensearch import opensearch_cluster  # noqa: F401  (session fixture)

# Runs inside the namespace: mounts the tmpfs, writes the earlier outputs, fills the rest of the
# disk, runs the command there, then prints what the disk holds afterwards (but the filler).
_ON_A_FULL_DISK = r"""
import errno, json, os, subprocess, sys
spec = json.loads(sys.argv[1])
disk = spec["disk"]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + spec["size"], "tmpfs", disk], check=True)
for name, text in spec["files"].items():
    with open(os.path.join(disk, name), "w") as f:
        f.write(text)
fd = os.open(os.path.join(disk, "filler"), os.O_WRONLY | os.O_CREAT, 0o600)
try:
    while True:
        os.write(fd, bytes(4096))
except OSError as e:
    assert e.errno == errno.ENOSPC, e
# Then `free` bytes are given back: the command runs out of space after writing them.
os.ftruncate(fd, os.fstat(fd).st_size - spec["free"])
os.close(fd)
stdout = open(os.path.join(disk, spec["stdout"]), "w") if spec["stdout"] else subprocess.DEVNULL
proc = subprocess.run(spec["argv"], cwd=disk, stdout=stdout, stderr=subprocess.PIPE,
                      text=True, errors="replace", timeout=120)
files = {}
for name in sorted(os.listdir(disk)):
    if name != "filler":
        with open(os.path.join(disk, name), errors="replace") as f:
            files[name] = f.read()
print(json.dumps({"returncode": proc.returncode, "stderr": proc.stderr, "files": files}))
"""


def on_a_full_disk(tmp_path, argv, files, stdout=None, size="64k", free=0):
    """Runs argv with its working directory on a full tmpfs that holds `files` (name -> text,
    the earlier outputs) and has `free` bytes left; stdout to the file `stdout` there when
    given. Returns (returncode, stderr, {name: text} of the disk afterwards)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    spec = {"disk": str(disk), "size": size, "free": free, "files": files, "stdout": stdout,
            "argv": [str(a) for a in argv]}
    proc = subprocess.run(["unshare", "--mount", "--map-root-user", sys.executable, "-c",
                           _ON_A_FULL_DISK, json.dumps(spec)],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    return result["returncode"], result["stderr"], result["files"]


def requests_sent(stderr):
    """The summary line's "N requests sent = S succeeded + F failed", as (N, S, F)."""
    m = re.search(r"hammer load: (\d+) requests sent = (\d+) succeeded \+ (\d+) failed", stderr)
    assert m, stderr
    return tuple(int(g) for g in m.groups())


EARLIER_SUMMARY = '{"schema": "the earlier run, whole"}\n'
EARLIER_HTML = "<html>the earlier report, whole</html>\n"


def test_load_reports_on_a_full_disk_keep_the_earlier_files_whole(serve, tmp_path):
    urls = tmp_path / "urls"
    urls.write_text(url_lines(serve.url("/")))
    code, stderr, files = on_a_full_disk(
        tmp_path, [HAMMER, "load", "-n", "50", "--loop", "--emit", "none", urls,
                   "--summary-json", "summary.json", "--html", "report.html"],
        {"summary.json": EARLIER_SUMMARY, "report.html": EARLIER_HTML})
    assert code == 1, stderr
    assert "hammer load: --summary-json: cannot write 'summary.json': No space left on device" \
        in stderr, stderr
    assert requests_sent(stderr) == (50, 50, 0)
    # The earlier outputs are whole, and nothing else was left on the disk.
    assert files == {"summary.json": EARLIER_SUMMARY, "report.html": EARLIER_HTML}


def test_load_records_to_a_full_disk_stop_the_run_and_say_how_many_were_written(serve, tmp_path):
    urls = tmp_path / "urls"
    urls.write_text(url_lines(serve.url("/")))
    before = serve.stats()["requests"]
    code, stderr, files = on_a_full_disk(
        tmp_path, [HAMMER, "load", "-n", "100000", "--loop", "-c", "4", urls], {},
        stdout="records.tsv", size="2m", free=1 << 20)
    assert code == 1, stderr
    m = re.search(r"standard output: cannot write records: No space left on device "
                  r"\(after (\d+) records\)", stderr)
    assert m, stderr
    sent, succeeded, failed = requests_sent(stderr)
    # Every request sent is in the summary, and the server saw exactly those.
    assert serve.stats()["requests"] - before == sent == succeeded and failed == 0
    written = int(m.group(1))
    complete_lines = files["records.tsv"].count("\n")
    assert 0 < written <= complete_lines < sent, (written, complete_lines, sent)
    assert list(files) == ["records.tsv"]


def test_load_records_to_dev_full_exit_non_zero(serve, tmp_path):
    """The issue's reproduction: `hammer load -n 200 --loop urls > /dev/full` exited 0."""
    urls = tmp_path / "urls"
    urls.write_text(url_lines(serve.url("/")))
    with open("/dev/full", "w") as full:
        proc = subprocess.run([HAMMER, "load", "-n", "200", "--loop", str(urls)], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "cannot write records: No space left on device (after 0 records)" in proc.stderr
    assert requests_sent(proc.stderr) == (200, 200, 0)


def records_file(tmp_path, keys=3, per_key=2000):
    path = tmp_path / "records.tsv"
    path.write_text("".join(f"http://h/{k}\t0.00{1 + i % 9}\n"
                            for k in range(keys) for i in range(per_key)))
    return path


def test_stats_files_on_a_full_disk_keep_the_earlier_files_whole(tmp_path):
    records = records_file(tmp_path)
    earlier_log = "#[the earlier interval log]\n"
    code, stderr, files = on_a_full_disk(
        tmp_path, [HAMMER, "stats", "--html", "report.html", "--hdr-log", "hdr.log", records],
        {"report.html": EARLIER_HTML, "hdr.log": earlier_log})
    assert code != 0, stderr
    assert "No space left on device" in stderr and ("'hdr.log'" in stderr
                                                    or "'report.html'" in stderr), stderr
    assert files == {"report.html": EARLIER_HTML, "hdr.log": earlier_log}


def test_stats_to_a_full_disk_and_dev_full(tmp_path):
    records = records_file(tmp_path)
    code, stderr, files = on_a_full_disk(tmp_path, [HAMMER, "stats", "--reducer", records], {},
                                         stdout="reduced.tsv")
    assert code == 1, stderr
    assert "cannot write to standard output: No space left on device" in stderr, stderr
    with open("/dev/full", "w") as full:
        proc = subprocess.run([HAMMER, "stats", "--table", str(records)], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "cannot write to standard output: No space left on device" in proc.stderr


def pipe_into_head(argv):
    """Runs argv | head -1, both real processes. Returns (argv's exit status, its stderr, what
    head printed)."""
    producer = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    head = subprocess.Popen(["head", "-1"], stdin=producer.stdout, stdout=subprocess.PIPE,
                            text=True)
    producer.stdout.close()  # head holds the only reading end: when it exits, the pipe closes
    first, _ = head.communicate(timeout=60)
    _, stderr = producer.communicate(timeout=60)
    return producer.returncode, stderr, first


def test_load_into_head_stops_promptly_and_accounts_for_every_request(serve, tmp_path):
    urls = tmp_path / "urls"
    urls.write_text(url_lines(serve.url("/")))
    before = serve.stats()["requests"]
    # Ten million requests would take minutes: the run ends because head went away.
    code, stderr, first = pipe_into_head([HAMMER, "load", "-n", "10000000", "--loop", "-c", "4",
                                          str(urls)])
    assert code == 1, (code, stderr)  # an exit, not death by SIGPIPE (-13)
    assert re.fullmatch(re.escape(serve.url("/")) + r"\t\d+\.\d{6}\n", first), first
    assert "hammer load: cannot write records: Broken pipe; stopping, waiting for requests in " \
        "flight" in stderr, stderr
    assert re.search(r"cannot write records: Broken pipe \(after [1-9]\d* records\)", stderr)
    sent, succeeded, failed = requests_sent(stderr)
    assert sent < 10_000_000
    # Nothing lost, nothing counted twice: the server received exactly the requests summarised.
    assert serve.stats()["requests"] - before == sent == succeeded and failed == 0


def test_stats_into_head_exits_cleanly(tmp_path):
    records = records_file(tmp_path, keys=20000, per_key=1)
    code, stderr, first = pipe_into_head([HAMMER, "stats", "--reducer", str(records)])
    assert code == 1, (code, stderr)
    assert first.startswith("http://h/0\t"), first
    assert "cannot write to standard output: Broken pipe" in stderr, stderr


def test_help_to_dev_full():
    """stdio's standard output is checked at exit, as coreutils' close_stdout does."""
    with open("/dev/full", "w") as full:
        proc = subprocess.run([HAMMER, "load", "--help"], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=30)
    assert proc.returncode == 1
    # stdio met the error while printing, before the check: it says what, not why.
    assert proc.stderr == "hammer load: cannot write to standard output\n", proc.stderr


def test_bulk_files_on_a_full_disk_keep_the_earlier_files_whole(opensearch_cluster, tmp_path):
    """The documents are indexed; the dead letters and the summary that cannot be written are
    said, the run exits non-zero, and the earlier files stay whole."""
    cluster = opensearch_cluster
    cluster.request("DELETE", "/sinks")
    status, body = cluster.request("PUT", "/sinks", {"settings": {"number_of_shards": 2,
                                                                  "number_of_replicas": 0}})
    assert status == 200, body
    docs = tmp_path / "docs.jsonl"
    # 1,000 documents, every tenth not JSON: 100 dead letters of ~100 bytes, more than 64 KiB.
    docs.write_text("".join(("not json %d %s\n" % (i, "x" * 80)) if i % 10 == 0 else
                            '{"id":"d%d","n":%d}\n' % (i, i) for i in range(1000)))
    earlier_dead = '{"the earlier dead letters": "whole"}\n'
    code, stderr, files = on_a_full_disk(
        tmp_path, [HAMMER, "bulk", "--cluster", cluster.url(0), "--index", "sinks",
                   "--id-field", "id", "--dead-letter", "dead.jsonl",
                   "--summary-json", "summary.json", docs],
        {"dead.jsonl": earlier_dead, "summary.json": EARLIER_SUMMARY})
    assert code == 1, stderr
    assert "hammer bulk: --dead-letter: cannot write 'dead.jsonl': No space left on device\n" \
        in stderr, stderr
    assert "hammer bulk: --summary-json: cannot write 'summary.json': No space left on device\n" \
        in stderr, stderr
    assert "1000 documents read = 900 indexed + 100 dead-lettered" in stderr, stderr
    assert files == {"dead.jsonl": earlier_dead, "summary.json": EARLIER_SUMMARY}
    cluster.request("POST", "/sinks/_refresh")
    status, body = cluster.request("GET", "/sinks/_count")
    assert body["count"] == 900, body
    cluster.request("DELETE", "/sinks")


def into_a_terminal_that_hangs_up(argv):
    """Runs argv with its standard output on a pseudo-terminal whose other side reads the first
    line and closes: the terminal is hung up, as when an SSH session drops, and every later
    write to it fails with EIO (a real kernel error, no stand-in). Returns (argv's exit status,
    its stderr, the first line)."""
    master, slave = pty.openpty()
    tty.setraw(slave)  # bytes as written: no "\r\n" for "\n"
    proc = subprocess.Popen(argv, stdout=slave, stderr=subprocess.PIPE, text=True)
    os.close(slave)
    first = b""
    try:
        while not first.endswith(b"\n"):
            ready, _, _ = select.select([master], [], [], 30)
            assert ready, "no line on the terminal within 30 s"
            first += os.read(master, 1)  # EIO if the command closed the terminal first
    finally:
        os.close(master)
    _, stderr = proc.communicate(timeout=60)
    return proc.returncode, stderr, first.decode()


def test_load_records_to_a_terminal_that_hangs_up_stop_the_run(serve, tmp_path):
    urls = tmp_path / "urls"
    urls.write_text(url_lines(serve.url("/")))
    before = serve.stats()["requests"]
    # --records: on a terminal, load writes records only when asked.
    code, stderr, first = into_a_terminal_that_hangs_up(
        [HAMMER, "load", "--records", "-n", "10000000", "--loop", "-c", "4", str(urls)])
    assert code == 1, (code, stderr)
    assert re.fullmatch(re.escape(serve.url("/")) + r"\t\d+\.\d{6}\n", first), first
    assert re.search(r"cannot write records: Input/output error \(after [1-9]\d* records\)",
                     stderr), stderr
    sent, succeeded, failed = requests_sent(stderr)
    assert sent < 10_000_000
    assert serve.stats()["requests"] - before == sent == succeeded and failed == 0


def test_stats_to_a_terminal_that_hangs_up(tmp_path):
    records = records_file(tmp_path, keys=20000, per_key=1)
    code, stderr, first = into_a_terminal_that_hangs_up([HAMMER, "stats", "--reducer",
                                                         str(records)])
    assert code == 1, (code, stderr)
    assert first.startswith("http://h/0\t"), first
    assert "cannot write to standard output: Input/output error" in stderr, stderr


def documents_file(tmp_path, count=100_000):
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(f'{{"id": "{i}", "v": {i}}}\n' for i in range(count)))
    return path


def test_route_to_dev_full_head_and_a_terminal_that_hangs_up(tmp_path):
    """route writes every document to standard output: ENOSPC, EPIPE and EIO each end it with
    the reason, exit 1, never death by a signal."""
    argv = [HAMMER, "route", "--shards", "6", "--id-field", "id", str(documents_file(tmp_path))]
    with open("/dev/full", "w") as full:
        proc = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "cannot write to standard output: No space left on device" in proc.stderr
    code, stderr, first = pipe_into_head(argv)
    assert code == 1, (code, stderr)
    assert re.fullmatch(r'\d\t\{"id": "0", "v": 0\}\n', first), first
    assert "cannot write to standard output: Broken pipe" in stderr, stderr
    code, stderr, first = into_a_terminal_that_hangs_up(argv)
    assert code == 1, (code, stderr)
    assert re.fullmatch(r'\d\t\{"id": "0", "v": 0\}\n', first), first
    assert "cannot write to standard output: Input/output error" in stderr, stderr
