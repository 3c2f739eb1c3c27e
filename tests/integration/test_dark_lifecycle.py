"""`hammer dark`'s lifecycle through the real binary: SIGTERM under traffic drains the requests
in flight (each gets its real response), refuses new connections, abandons and counts the dark
copies, prints its counters and exits 0; past --drain-timeout what is left is closed and
counted; a second signal stops at once; and the proxy built with AddressSanitizer and
LeakSanitizer, stopped under traffic, reports no leak."""
import os
import signal
import socket
import time
from pathlib import Path

import pytest

from dark_support import DarkProxy, InFlight
from harness import ROOT

ASAN_HAMMER = os.environ.get("HAMMER_ASAN", str(ROOT / "build" / "asan" / "hammer"))


def refused(proxy):
    try:
        with socket.create_connection((proxy.host, proxy.port), timeout=2):
            return False
    except ConnectionRefusedError:
        return True
    except ConnectionResetError:
        # The connection reached a listening socket's queue as the drain closed it (each loop
        # has its own SO_REUSEPORT listener): not an answer either way, so ask again.
        return False


def wait_until(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_sigterm_drains_requests_in_flight_and_abandons_copies(servers, signum):
    regular, dark = servers(), servers()
    proxy = DarkProxy("--upstream", regular.url(), "--dark", f"canary={dark.url()}",
                      "--regular-instances", "1", "--threads", "2", "--drain-timeout", "20s")
    try:
        clients = InFlight(proxy, "/delay/800", 16)
        proxy.wait_for_metric("hammer_dark_requests_total", lambda v: v == 16)
        in_flight = proxy.wait_for_metric('hammer_dark_copies_in_flight{cluster="canary"}',
                                          lambda v: v == 16)
        proxy.proc.send_signal(signum)
        # New connections are refused while the requests in flight are still being served.
        assert wait_until(lambda: refused(proxy), timeout=5)
        results = clients.join()
        assert proxy.proc.wait(timeout=30) == 0
    finally:
        proxy.stop()
    # Every user request in flight got its real response, and was told the connection closes.
    assert results == [(200, "close", b"ok\n")] * 16, results
    assert regular.stats()["requests"] == 16
    summary = proxy.stderr
    assert "every request in flight was answered" in summary, summary
    assert "requests 16, responses 16, requests abandoned 0" in summary, summary
    assert f"copies sent 16, succeeded 0, failed 0, dropped 0, abandoned {int(in_flight)}" \
        in summary, summary


def test_drain_timeout_closes_and_counts_what_is_left(servers):
    regular = servers()
    proxy = DarkProxy("--upstream", regular.url(), "--drain-timeout", "300ms")
    try:
        clients = InFlight(proxy, "/delay/20000", 4)
        proxy.wait_for_metric("hammer_dark_requests_total", lambda v: v == 4)
        proxy.proc.send_signal(signal.SIGTERM)
        assert proxy.proc.wait(timeout=15) == 0
        results = clients.join()
    finally:
        proxy.stop()
    assert all(r[0] == "error" for r in results), results  # closed without a response
    assert "requests 4, responses 0, requests abandoned 4" in proxy.stderr, proxy.stderr
    assert "requests still in flight were abandoned" in proxy.stderr


def test_a_second_signal_stops_at_once(servers):
    regular = servers()
    proxy = DarkProxy("--upstream", regular.url(), "--drain-timeout", "120s")
    try:
        clients = InFlight(proxy, "/delay/60000", 2)
        proxy.wait_for_metric("hammer_dark_requests_total", lambda v: v == 2)
        proxy.proc.send_signal(signal.SIGTERM)
        assert wait_until(lambda: refused(proxy), timeout=5)
        assert proxy.proc.poll() is None  # still draining
        proxy.proc.send_signal(signal.SIGINT)
        # Far less than the 120 s drain and the 60 s requests: the second signal ended it.
        assert proxy.proc.wait(timeout=20) == 0
        clients.join()
    finally:
        proxy.stop()
    assert "requests 2, responses 0, requests abandoned 2" in proxy.stderr, proxy.stderr


@pytest.mark.skipif(not Path(ASAN_HAMMER).exists(),
                    reason=f"{ASAN_HAMMER} not built (make asan builds it)")
def test_asan_build_stopped_under_traffic_leaks_nothing(servers):
    regular = servers()
    silent_dark = socket.socket()  # a dark cluster that accepts nothing: copies stay in flight
    silent_dark.bind(("127.0.0.1", 0))
    silent_dark.listen(64)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:halt_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    proxy = DarkProxy("--upstream", regular.url(), "--dark",
                      f"canary=http://127.0.0.1:{silent_dark.getsockname()[1]}",
                      "--regular-instances", "1", "--threads", "2", "--drain-timeout", "500ms",
                      "--dark-timeout", "120s",
                      "--compare", hammer=ASAN_HAMMER, env=env)
    try:
        fast = InFlight(proxy, "/", 8)
        fast.join()
        slow = InFlight(proxy, "/delay/30000", 6)  # still in flight past the drain timeout
        proxy.wait_for_metric("hammer_dark_requests_total", lambda v: v == 14, timeout=30)
        proxy.wait_for_metric('hammer_dark_sent_total{cluster="canary"}', lambda v: v == 14,
                              timeout=30)
        proxy.proc.send_signal(signal.SIGTERM)
        code = proxy.proc.wait(timeout=60)
        slow.join()
    finally:
        proxy.stop()
        silent_dark.close()
    assert "LeakSanitizer" not in proxy.stderr and "AddressSanitizer" not in proxy.stderr, \
        proxy.stderr
    assert code == 0, proxy.stderr
    assert "requests 14, responses 8, requests abandoned 6" in proxy.stderr, proxy.stderr
    assert "copies sent 14" in proxy.stderr and "abandoned 14" in proxy.stderr, proxy.stderr
