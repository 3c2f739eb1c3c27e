"""Fixtures shared by the integration tests. Servers they start bind 127.0.0.1 and are stopped
by the fixture's teardown on every path."""
import os
import shutil

import pytest

from dark_support import DarkProxy
from harness import HAMMER, ClosedPort, HammerServe, Nginx, started_until_teardown
from logged_nginx import LoggedNginx
from tls_pki import make_pki


# Skips that do not fail the run: {test node id: why it is expected}. A test that cannot run
# here fails, naming the command that installs what it needs (prerequisites.py); a skip not
# listed here fails the run, so a missing engine can never pass for a green `make test`. `-rs`
# (the Makefile's pytest line) prints every skip's reason.
EXPECTED_SKIPS = {
    "test_dark_lifecycle.py::test_asan_build_stopped_under_traffic_leaks_nothing":
        "needs build/asan/hammer: `make test` builds it (make unit) before the integration "
        "tests; `make integration` alone does not",
}


def _expected_skip(nodeid):
    # Node ids start with the path from pytest's rootdir, which depends on how it was invoked.
    return any(nodeid == key or nodeid.endswith("/" + key) for key in EXPECTED_SKIPS)


def pytest_configure(config):
    if not os.access(HAMMER, os.X_OK):
        raise pytest.UsageError(f"hammer binary not found at {HAMMER}; run `make build` "
                                "or set HAMMER=/path/to/hammer")


def _skip_reason(report):
    longrepr = report.longrepr
    return longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A skipped test not in EXPECTED_SKIPS is reported as failed, with the skip's reason."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and not _expected_skip(item.nodeid):
        reason = _skip_reason(report)
        report.outcome = "failed"
        report.longrepr = (f"unexpected skip: {reason}\n(make test fails on a skip that "
                           "tests/integration/conftest.py EXPECTED_SKIPS does not list)")


_unexpected_collection_skips = []


def pytest_collectreport(report):
    """A module skipped while being collected cannot be turned into a failed test: it fails the
    session at the end instead."""
    if report.skipped and not _expected_skip(report.nodeid):
        _unexpected_collection_skips.append(f"{report.nodeid}: {_skip_reason(report)}")


def pytest_sessionfinish(session, exitstatus):
    if _unexpected_collection_skips:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        for line in _unexpected_collection_skips:
            if reporter is not None:
                reporter.write_line(f"UNEXPECTED SKIP (collection) {line}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture
def serve():
    server = HammerServe("--threads", "2")
    yield server
    server.stop()


@pytest.fixture
def nginx():
    server = Nginx()
    yield server
    server.stop()


@pytest.fixture
def start_nginx():
    """Starts nginx instances (Nginx(**kwargs)) and stops all of them after the test."""
    yield from started_until_teardown(Nginx)


@pytest.fixture
def servers():
    """Starts `hammer serve` instances (HammerServe(*args)) and stops all of them after the
    test."""
    yield from started_until_teardown(HammerServe)


@pytest.fixture
def proxies():
    """Starts `hammer dark` proxies (DarkProxy(*args, **kwargs)) and stops all of them after the
    test."""
    yield from started_until_teardown(DarkProxy)


@pytest.fixture
def closed_port():
    """A loopback port where connections are refused, reserved for the test (harness.ClosedPort)."""
    with ClosedPort() as port:
        yield port.port


@pytest.fixture(scope="session")
def pki(tmp_path_factory):
    """A CA and leaf certificates made with openssl (tls_pki.make_pki)."""
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def logged(start_nginx, serve, tmp_path):
    """nginx with the JSON access log in front of `hammer serve` (logged_nginx.LoggedNginx)."""
    return LoggedNginx(start_nginx, serve, tmp_path)


@pytest.fixture(scope="module")
def hammer_bin(tmp_path_factory):
    """A private copy of the hammer binary for jobs that run for a while (Hadoop, Spark): a
    concurrent rebuild of build/release/hammer must not swap the program under them."""
    path = tmp_path_factory.mktemp("hammer-bin") / "hammer"
    shutil.copy2(HAMMER, path)
    return str(path)
