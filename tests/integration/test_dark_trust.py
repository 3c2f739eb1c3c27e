"""Trust boundaries of `hammer dark`, through the real binary: what a hostile client sends and
what the upstreams then receive. Clients are raw sockets and curl; the regular upstream and the
dark cluster are RawRecorders (raw_recorder.py: they record the exact bytes forwarded), or
`hammer serve` where its /echo and /_hammer/stats routes show what arrived."""
import json
import os
import subprocess
import tempfile
import time

import pytest

from harness import HAMMER, HammerServe, started_until_teardown
from raw_recorder import RawRecorder, raw_exchange, status_of


@pytest.fixture
def recorders():
    yield from started_until_teardown(RawRecorder)


def curl(url, *args):
    r = subprocess.run(["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", url, *args],
                       capture_output=True, text=True, timeout=30)
    body, _, code = r.stdout.rpartition("\n")
    return int(code), body


def wait_until(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def forked_proxy(proxies, regular, dark, *extra):
    """Ns = Nd = 1, multiplier 1: every eligible request is copied exactly once."""
    return proxies("--upstream", regular.url(), "--dark", f"canary={dark.url()}",
                   "--regular-instances", "1", *extra)


def settle(proxy):
    proxy.wait_for_metric('hammer_dark_copies_in_flight{cluster="canary"}', lambda v: v == 0)


def test_absolute_form_never_selects_the_upstream_or_its_vhost(proxies, recorders):
    regular, dark = recorders(), recorders()
    proxy = forked_proxy(proxies, regular, dark)
    response = raw_exchange(proxy.address, b"GET http://evil.example/admin?x=1 HTTP/1.1\r\n"
                            b"Host: client.example\r\nConnection: close\r\n\r\n")
    assert status_of(response) == 200, response
    settle(proxy)
    for recorder in (regular, dark):
        (request,) = recorder.received()
        assert request.target == b"/admin?x=1"
        assert request.values("host") == [recorder.address.encode()]
        assert b"evil.example" not in b"".join(recorder.connections())
    # Neither origin-form nor absolute-form: refused, counted, nothing forwarded.
    response = raw_exchange(proxy.address, b"GET evil.example:443 HTTP/1.1\r\n"
                            b"Host: client.example\r\n\r\n")
    assert status_of(response) == 400, response
    assert proxy.metrics()["hammer_dark_bad_targets_total"] == 1
    assert len(regular.received()) == 1


def test_a_clients_own_dark_header_is_removed_and_counted(proxies, recorders):
    regular, dark = recorders(), recorders()
    proxy = forked_proxy(proxies, regular, dark)
    code, _ = curl(proxy.url("/item/1"), "-H", "X-Hammer-Dark: forged", "-H",
                   "x-hammer-dark: forged-again")
    assert code == 200
    settle(proxy)
    (primary,) = regular.received()
    assert primary.values("x-hammer-dark") == []
    (copy,) = dark.received()
    assert copy.values("x-hammer-dark") == [b"canary"]
    assert b"forged" not in b"".join(regular.connections() + dark.connections())
    assert proxy.metrics()["hammer_dark_client_dark_headers_removed_total"] == 1


@pytest.mark.parametrize("trusted", [False, True])
def test_method_override_decides_eligibility_only_when_trusted(proxies, recorders, trusted):
    regular, dark = recorders(), recorders()
    proxy = forked_proxy(proxies, regular, dark,
                         *(["--trust-method-override"] if trusted else []))
    for name in ("X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override"):
        code, _ = curl(proxy.url("/orders/7"), "-X", "DELETE", "-H", f"{name}: GET", "-H",
                       "Authorization: Bearer user-token", "-H", "Cookie: session=abc")
        assert code == 200
    # A GET that an upstream honouring overrides would run as a DELETE is never forked.
    code, _ = curl(proxy.url("/orders/8"), "-H", "X-HTTP-Method-Override: DELETE")
    assert code == 200
    code, _ = curl(proxy.url("/orders/9"))
    assert code == 200
    settle(proxy)
    assert [r.method for r in regular.received()] == [b"DELETE"] * 3 + [b"GET", b"GET"]
    forked = [(r.method, r.target) for r in dark.received()]
    if trusted:
        assert forked == [(b"DELETE", b"/orders/7")] * 3 + [(b"GET", b"/orders/9")]
    else:
        assert forked == [(b"GET", b"/orders/9")]


@pytest.mark.parametrize("forwarded_for", [True, False])
def test_client_address_is_appended_to_forwarded_headers(proxies, recorders, forwarded_for):
    regular, dark = recorders(), recorders()
    proxy = forked_proxy(proxies, regular, dark,
                         *([] if forwarded_for else ["--no-forwarded-for"]))
    code, _ = curl(proxy.url("/"), "-H", "X-Forwarded-For: 203.0.113.9", "-H",
                   "Forwarded: for=203.0.113.9", "-H",
                   "Connection: X-Forwarded-For, Forwarded, X-Real-IP", "-H",
                   "X-Real-IP: 203.0.113.9")
    assert code == 200
    code, _ = curl(proxy.url("/plain"))
    assert code == 200
    settle(proxy)
    for recorder in (regular, dark):
        first, second = recorder.received()
        # Connection could not strip what a proxy in front of this one asserted.
        assert first.values("x-real-ip") == [b"203.0.113.9"]
        if forwarded_for:
            assert first.values("x-forwarded-for") == [b"203.0.113.9, 127.0.0.1"]
            assert first.values("forwarded") == [b"for=203.0.113.9, for=127.0.0.1"]
            assert second.values("x-forwarded-for") == [b"127.0.0.1"]
        else:
            assert first.values("x-forwarded-for") == [b"203.0.113.9"]
            assert first.values("forwarded") == [b"for=203.0.113.9"]
            assert second.values("x-forwarded-for") == []


def test_preserve_host_forwards_exactly_one_host(proxies, recorders):
    regular, dark = recorders(), recorders()
    proxy = forked_proxy(proxies, regular, dark, "--preserve-host")
    code, _ = curl(proxy.url("/"), "-H", "Host: shop.example")
    assert code == 200
    settle(proxy)
    for recorder in (regular, dark):
        (request,) = recorder.received()
        assert request.values("host") == [b"shop.example"]


HOST_AND_CODING_VECTORS = [
    ("duplicate Host", b"GET / HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n", 400),
    ("missing Host", b"GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", 400),
    ("Host with a path", b"GET / HTTP/1.1\r\nHost: a.example/x\r\n\r\n", 400),
    ("gzip, chunked", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
     b"0\r\n\r\n", 501),
    ("chunked, chunked", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
     b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501),
    ("identity", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n", 501),
]


@pytest.mark.parametrize("name,request_bytes,status", HOST_AND_CODING_VECTORS,
                         ids=[v[0] for v in HOST_AND_CODING_VECTORS])
def test_host_and_transfer_coding_rules(proxies, recorders, name, request_bytes, status):
    regular = recorders()
    proxy = proxies("--upstream", regular.url())
    serve = HammerServe()
    try:
        for address in (proxy.address, serve.address):
            response = raw_exchange(address, request_bytes)
            assert status_of(response) == status, (address, response)
        assert serve.stats()["requests"] == 0  # refused by the parser: nothing served
    finally:
        serve.stop()
    assert regular.connections() == []
    # HTTP/1.0 may omit Host: forwarded with the upstream's.
    response = raw_exchange(proxy.address, b"GET /old HTTP/1.0\r\n\r\n")
    assert status_of(response) == 200
    (request,) = regular.received()
    assert request.values("host") == [regular.address.encode()]


@pytest.fixture
def token_file():
    with tempfile.NamedTemporaryFile("w", suffix=".token", delete=False) as f:
        f.write("s3cret-admin-token\n")
    yield f.name
    os.unlink(f.name)


def test_admin_off_loopback_requires_a_token():
    r = subprocess.run([HAMMER, "dark", "--listen", "127.0.0.1:0", "--upstream",
                        "http://127.0.0.1:9", "--admin", "0.0.0.0:0"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert "requires --admin-token-file" in r.stderr


def test_admin_port_alone_binds_loopback(proxies, recorders):
    proxy = proxies("--upstream", recorders().url(), "--admin", "0", admin=False)
    admin = proxy.proc.stdout.readline().strip()
    assert admin.startswith("127.0.0.1:")
    proxy.admin = admin
    assert "hammer_dark_requests_total 0" in proxy.get_admin("/metrics")


def test_admin_token_is_required_when_given(proxies, recorders, token_file):
    proxy = proxies("--upstream", recorders().url(), "--admin-token-file", token_file)
    admin = f"http://{proxy.admin}/metrics"
    assert curl(admin)[0] == 401
    assert curl(admin, "-H", "Authorization: Bearer s3cret-admin-tokeN")[0] == 401
    assert curl(admin, "-H", "Authorization: Basic s3cret-admin-token")[0] == 401
    code, body = curl(admin, "-H", "Authorization: Bearer s3cret-admin-token")
    assert code == 200 and "hammer_dark_requests_total" in body
    r = subprocess.run(["curl", "-sS", "-D", "-", "-o", "/dev/null", admin], capture_output=True,
                       text=True, timeout=30)
    assert "www-authenticate: bearer" in r.stdout.lower()


def test_report_redacts_credentials(proxies):
    regular, dark = HammerServe(), HammerServe()
    try:
        proxy = proxies("--upstream", regular.url(), "--dark", f"canary={dark.url()}",
                        "--regular-instances", "1", "--compare")
        for _ in range(3):
            code, body = curl(proxy.url("/echo"), "-H", "Authorization: Bearer user-secret-1",
                              "-H", "Cookie: session=user-secret-2")
            assert code == 200 and "user-secret-1" in body  # the user's answer is untouched
        wait_until(lambda: '"total":3' in proxy.get_admin("/hammer/dark/report").replace(" ", ""))
        report = proxy.get_admin("/hammer/dark/report")
        parsed = json.loads(report)
        endpoint = next(e for e in parsed["endpoints"] if e["endpoint"] == "GET /echo")
        assert endpoint["total"] == 3
        # The dark copy's echo differs (it carries X-Hammer-Dark), so samples with bodies exist.
        assert "[redacted]" in report
        assert "user-secret" not in report
    finally:
        regular.stop()
        dark.stop()
