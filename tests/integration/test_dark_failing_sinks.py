"""`hammer dark` keeps serving its users when a sink fails: its log (stderr) read by a pipe
whose reader went away (EPIPE, SIGPIPE ignored), its log on a terminal that hung up (EIO, as
when the SSH session it was started from drops), and a --verdict-json that cannot be written
(/dev/full). Real processes: hammer load -> hammer dark -> hammer serve."""
import os
import pty
import signal
import subprocess

import pytest

from dark_support import DarkProxy, InFlight
from harness import HAMMER, HammerServe, run_hammer, wait_for


@pytest.fixture
def servers():
    started = [HammerServe("--threads", "1"), HammerServe("--threads", "1")]
    yield started
    for s in started:
        s.stop()


def test_dark_serves_on_after_its_log_reader_went_away(servers):
    primary, dark = servers
    read_end, write_end = os.pipe()
    proc = subprocess.Popen([HAMMER, "dark", "--listen", "127.0.0.1:0",
                             "--upstream", f"http://{primary.address}",
                             "--dark", f"canary=http://{dark.address}"],
                            stdout=subprocess.PIPE, stderr=write_end, text=True)
    os.close(write_end)
    try:
        address = proc.stdout.readline().strip()
        assert address, "hammer dark did not start"
        os.close(read_end)  # nobody reads the log any more: its next write is EPIPE
        read_end = None
        r = run_hammer(["load", "-n", "300", "--loop", "-c", "4", "--emit", "none",
                        f"http://{address}/"])
        assert r.returncode == 0, r.stderr
        assert "300 requests sent = 300 succeeded + 0 failed" in r.stderr, r.stderr
        # Stopped, it writes its summary to the closed log, and exits as it always does.
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if read_end is not None:
            os.close(read_end)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def test_dark_serves_on_after_its_terminal_hung_up(servers):
    primary, dark = servers
    master, slave = pty.openpty()
    # Not its controlling terminal (Popen does not make one): the hang-up sends no SIGHUP, as
    # under nohup; only the writes fail.
    proc = subprocess.Popen([HAMMER, "dark", "--listen", "127.0.0.1:0",
                             "--upstream", f"http://{primary.address}",
                             "--dark", f"canary=http://{dark.address}"],
                            stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    try:
        address = proc.stdout.readline().strip()
        assert address, "hammer dark did not start"
        os.close(master)  # hung up: every later write to the log is EIO
        master = None
        r = run_hammer(["load", "-n", "300", "--loop", "-c", "4", "--emit", "none",
                        f"http://{address}/"])
        assert r.returncode == 0, r.stderr
        assert "300 requests sent = 300 succeeded + 0 failed" in r.stderr, r.stderr
        # Copies go on too: the canary receives every request.
        wait_for(lambda: dark.stats()["requests"] == 300, what="300 copies at the canary")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if master is not None:
            os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def test_a_verdict_that_cannot_be_written_ends_after_the_users_are_answered(servers):
    primary, dark = servers
    proxy = DarkProxy("--upstream", f"http://{primary.address}",
                      "--dark", f"canary=http://{dark.address}", "--regular-instances", "1",
                      "--judge", "samples>=1000", "--verdict-after", "3s",
                      "--verdict-json", "/dev/full", "--drain-timeout", "20s")
    try:
        # Still waiting for their answers (6 s) when the verdict is due (3 s after the start).
        clients = InFlight(proxy, "/delay/6000", 4)
        proxy.wait_for_metric("hammer_dark_requests_total", lambda v: v == 4)
        assert proxy.proc.wait(timeout=60) == 1
        results = clients.join()
    finally:
        proxy.stop()
    assert results == [(200, "close", b"ok\n")] * 4, results
    assert "hammer dark: --verdict-json: cannot write '/dev/full': No space left on device" \
        in proxy.stderr, proxy.stderr
    assert "every request in flight was answered" in proxy.stderr, proxy.stderr
