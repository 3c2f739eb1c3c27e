"""`hammer load` under SIGINT and SIGTERM, whatever it is doing: reading an idle pipe or a
terminal, skipping an endless line (/dev/zero), waiting on slow requests. Each test sends real
signals to a real run and checks the summary and the exit status (130 / 143, 0 in a Hadoop
task); a second signal abandons the requests in flight. Also the output defaults: records only
to a file or pipe (or with --records), Hadoop reporter: lines only when asked, the open-file
limit raised and checked before anything is sent."""
import os
import pty
import re
import resource
import select
import signal
import subprocess
import time

import pytest

from harness import HAMMER, run_hammer, url_lines

SIGNALS_BLOCKED = (1 << (signal.SIGINT - 1)) | (1 << (signal.SIGTERM - 1))


def wait_until(predicate, what, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise TimeoutError(what)


def signals_blocked(pid):
    """True once the process blocks SIGINT and SIGTERM (it then waits for them itself). Read
    from every thread: the one waiting in sigtimedwait(2) shows them unblocked meanwhile."""
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/status") as f:
                for line in f:
                    if line.startswith("SigBlk:") and \
                            int(line.split()[1], 16) & SIGNALS_BLOCKED == SIGNALS_BLOCKED:
                        return True
    except (FileNotFoundError, ProcessLookupError):
        pass
    return False


def start_load(args, stdin=subprocess.DEVNULL, env=None, **kwargs):
    proc = subprocess.Popen([HAMMER, "load", *args], stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, **kwargs)
    wait_until(lambda: signals_blocked(proc.pid), "hammer load never blocked its signals")
    return proc


def read_stderr_until(proc, text, timeout=20.0):
    """Reads proc's stderr line by line until a line holds `text`; returns what was read."""
    seen = ""
    deadline = time.monotonic() + timeout
    while text not in seen and time.monotonic() < deadline:
        if select.select([proc.stderr], [], [], 0.1)[0]:
            line = proc.stderr.readline()
            if not line:
                break
            seen += line
    assert text in seen, seen
    return seen


def finish(proc, timeout=20):
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


@pytest.fixture
def idle_pipe():
    """A pipe whose writer stays open, so that its reader is idle, never at its end:
    (reader, writer), both closed after the test."""
    reader, writer = os.pipe()
    yield reader, writer
    os.close(reader)
    os.close(writer)


@pytest.fixture
def terminal():
    """A pseudo-terminal: (controller, terminal), both closed after the test."""
    controller, terminal = pty.openpty()
    yield controller, terminal
    os.close(controller)
    os.close(terminal)


@pytest.mark.parametrize("sig,status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_while_reading_an_idle_pipe(idle_pipe, sig, status):
    reader, _ = idle_pipe
    proc = start_load(["-", "-c", "2"], stdin=reader)
    proc.send_signal(sig)
    code, out, err = finish(proc)
    assert code == status, err
    assert "0 requests sent = 0 succeeded + 0 failed" in err
    assert "interrupted by " + signal.Signals(sig).name in err


@pytest.mark.parametrize("fmt,entry", [
    ("vegeta", "GET {url}\nX-Test: 1\n\n"),
    ("jsonl", '{{"method": "GET", "url": "{url}"}}\n'),
])
@pytest.mark.parametrize("sig,status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_while_a_request_file_waits_on_an_idle_pipe(serve, idle_pipe, fmt, entry, sig,
                                                           status):
    """A request file read from standard input stops on a signal as a URL list does: the entry
    already read is sent, and the run ends with its summary, not an input error."""
    reader, writer = idle_pipe
    proc = start_load(["--targets-format", fmt, "-", "-c", "1"], stdin=reader)
    os.write(writer, entry.format(url=serve.url("/")).encode())
    wait_until(lambda: serve.stats()["requests"] == 1, "the first entry was never sent")
    proc.send_signal(sig)
    code, out, err = finish(proc)
    assert code == status, err
    assert "1 requests sent = 1 succeeded + 0 failed" in err
    assert "interrupted by " + signal.Signals(sig).name in err
    assert out == serve.url("/") + "\t" + out.split("\t", 1)[1] and out.count("\n") == 1, out


def test_signal_while_skipping_an_endless_line():
    proc = start_load(["/dev/zero", "-c", "1"])
    proc.send_signal(signal.SIGTERM)
    code, out, err = finish(proc)
    assert code == 143, err
    assert "requests sent" in err and "interrupted by SIGTERM" in err


def test_second_signal_abandons_requests_in_flight(serve):
    proc = start_load([serve.url("/delay/600000"), serve.url("/delay/600000"), "-c", "2",
                       "-t", "1"])
    wait_until(lambda: serve.stats()["requests"] == 2, "the two requests never arrived")
    proc.send_signal(signal.SIGINT)
    # The first signal waits for the requests in flight: hammer says so and keeps running (two
    # signals sent before it took the first would merge into one).
    said = read_stderr_until(proc, "stopping, waiting for requests in flight")
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    code, out, err = finish(proc)
    err = said + err
    assert code == 130, err
    assert "aborted      2 requests in flight" in err, err
    assert "0 requests sent = 0 succeeded + 0 failed" in err
    assert out == ""  # abandoned requests are not records


def test_a_hadoop_task_stopped_by_sigterm_exits_0(serve):
    env = dict(os.environ, mapreduce_task_id="task_1_0001_m_000000",
               mapreduce_task_partition="0", mapreduce_job_maps="1")
    proc = start_load(["-", "-c", "1"], stdin=subprocess.PIPE, env=env)
    proc.stdin.write(url_lines(serve.url("/"), serve.url("/")))
    proc.stdin.flush()
    wait_until(lambda: serve.stats()["requests"] == 2, "the requests never arrived")
    proc.send_signal(signal.SIGTERM)
    code, out, err = finish(proc)
    assert code == 0, err
    assert "2 requests sent = 2 succeeded + 0 failed" in err and "interrupted by SIGTERM" in err
    assert len(out.splitlines()) == 2  # the records of what was done are the task's output
    assert "reporter:counter:" in err or "reporter:status:" in err
    proc.stdin.close()


def test_terminal_stdin_gets_a_hint_and_ctrl_c_stops_it(terminal):
    _, tty = terminal
    proc = start_load(["-c", "1"], stdin=tty)
    hint = read_stderr_until(proc, "reading URLs from the terminal")
    assert "hammer load URL" in hint, hint
    proc.send_signal(signal.SIGINT)
    code, out, err = finish(proc)
    assert code == 130, hint + err
    assert "0 requests sent" in err


def test_hammer_stats_on_a_terminal_says_what_it_waits_for(terminal):
    controller, tty = terminal
    proc = subprocess.Popen([HAMMER, "stats"], stdin=tty, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    hint = read_stderr_until(proc, "reading records from the terminal")
    assert "hammer load ... | hammer stats" in hint, hint
    os.write(controller, b"/a\t0.001000\n\x04")  # one record typed, then Ctrl-D
    code, out, err = finish(proc)
    assert code == 0, hint + err
    assert "/a" in out, out


def test_the_live_line_counts_what_was_done_by_its_second(serve, terminal):
    """At --rate 200 the line printed at 1.0 s showed 9 requests (and 209 at 2.0 s): workers
    handed their figures over once per wall-clock second. It now lags by at most a 100 ms
    interval: about 200 a second."""
    controller, tty = terminal
    # Started 0.8 s into a wall-clock second: hand-overs once per wall-clock second would then
    # have counted only the run's first 0.2 s by the line at 1.0 s.
    while time.time() % 1 < 0.8:
        time.sleep(0.01)
    proc = subprocess.Popen([HAMMER, "load", serve.url("/"), "--rate", "200", "-d", "3s"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=tty)
    shown = b""
    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:
        if select.select([controller], [], [], 0.1)[0]:
            shown += os.read(controller, 65536)
    out, _ = proc.communicate(timeout=30)
    while select.select([controller], [], [], 0.2)[0]:
        shown += os.read(controller, 65536)
    assert proc.returncode == 0, shown
    counts = {float(t): int(n) for t, n in
              re.findall(rb"(\d+\.\d)s\s+(\d+) requests", shown)}
    # Each line counts what was done up to its own time (printed 1.0 s, 2.0 s, ... or a little
    # later on a busy machine), less at most a quarter of a second.
    lines = [(t, n) for t, n in counts.items() if 1.0 <= t < 3.0]
    assert len(lines) >= 2, counts
    assert all(n >= 200 * (t - 0.25) for t, n in lines), counts
    assert len(out.splitlines()) == 600  # every request sent, each a record


def test_records_go_to_a_pipe_not_to_a_terminal(serve, terminal):
    r = run_hammer(["load", serve.url("/"), serve.url("/")])
    assert len(r.records) == 2
    controller, tty = terminal
    for extra, expected in (([], 0), (["--records"], 2)):
        proc = subprocess.run([HAMMER, "load", serve.url("/"), serve.url("/"), *extra],
                              stdin=subprocess.DEVNULL, stdout=tty, stderr=subprocess.PIPE,
                              text=True, timeout=30)
        assert proc.returncode == 0, proc.stderr
        written = b""
        while select.select([controller], [], [], 0.2)[0]:
            written += os.read(controller, 65536)
        records = [l for l in written.decode().splitlines() if "\t" in l]
        assert len(records) == expected, written


def test_reporter_lines_only_when_asked(serve):
    r = run_hammer(["load", serve.url("/"), serve.url("/status/500")])
    assert r.returncode == 0 and "reporter:" not in r.stderr, r.stderr
    r = run_hammer(["load", serve.url("/"), serve.url("/status/500"), "-q"])
    assert r.returncode == 0 and r.stderr == "", r.stderr  # -q: a clean 2>file
    r = run_hammer(["load", serve.url("/"), serve.url("/status/500"), "--hadoop-counters"])
    assert r.error_counter("http_5xx") == 1, r.stderr
    assert "reporter:status:" in r.stderr


def limit_descriptors(soft, hard):
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_open_file_limit_raised_to_the_hard_limit(serve):
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.skip(f"the hard open-file limit {hard} is below what this test needs")
    proc = subprocess.run([HAMMER, "load", "-", "-c", "600", "-t", "1", "--emit", "none"],
                          input=url_lines(*[serve.url("/")] * 600), capture_output=True,
                          text=True, timeout=60, preexec_fn=limit_descriptors(256, 2048))
    assert proc.returncode == 0, proc.stderr
    assert "600 requests sent = 600 succeeded + 0 failed" in proc.stderr, proc.stderr


def test_concurrency_beyond_the_hard_limit_is_refused_before_sending(serve):
    proc = subprocess.run([HAMMER, "load", serve.url("/"), "-c", "3000"],
                          capture_output=True, text=True, timeout=60,
                          preexec_fn=limit_descriptors(1024, 1024))
    assert proc.returncode == 2, proc.stderr
    assert "-c 3000 needs about" in proc.stderr and "open-file limit is 1024" in proc.stderr
    assert "lower -c" in proc.stderr and "ulimit -Hn" in proc.stderr
    assert serve.stats()["requests"] == 0
