import os

import pytest

from harness import HAMMER, HammerServe, Nginx


def pytest_configure(config):
    if not os.access(HAMMER, os.X_OK):
        raise pytest.UsageError(f"hammer binary not found at {HAMMER}; run `make build` "
                                "or set HAMMER=/path/to/hammer")


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
