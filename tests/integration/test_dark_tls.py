"""TLS on both sides of `hammer dark`, and in `hammer serve`, with real peers on loopback.

A CA made by openssl in the test (tls_pki.py) signs every certificate. Upstreams and dark
clusters are real nginx server blocks with TLS (one of them requiring a client certificate,
one presenting a certificate for another name); the users are curl (`--cacert`), Python's ssl
module (a raw keep-alive connection held across a reload) and `hammer load`.
"""
import json
import shutil
import signal
import socket
import ssl
import subprocess
import time
from pathlib import Path

import pytest

from harness import HAMMER, HammerServe, Nginx, free_port, run_hammer
from tls_pki import issue_leaf, make_pki, serial_of

LOG_FORMAT = (
    "log_format tls_json escape=json '{"
    '"u":"$request_uri","dark":"$http_x_hammer_dark","sni":"$ssl_server_name",'
    '"reused":"$ssl_session_reused","client":"$ssl_client_s_dn","verify":"$ssl_client_verify",'
    '"conn":"$connection"'
    "}';"
)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


class TlsUpstreams:
    """One nginx with TLS server blocks on loopback ports, each with its own access log:
    reg, dark and secondary (the test CA's localhost/127.0.0.1 certificate), reg_mtls and
    dark_mtls (the same, and a client certificate from the test CA is required), other (a
    certificate for other.test only). Every block answers 200 with what it saw of the TLS
    session; keepalive_requests 3 makes clients reconnect (and resume) every third request."""

    NAMES = ("reg", "dark", "secondary", "reg_mtls", "dark_mtls", "other")

    def __init__(self, pki, directory):
        self.ports = {name: free_port() for name in self.NAMES}
        self.logs = {name: Path(directory) / f"{name}.log" for name in self.NAMES}
        blocks = [LOG_FORMAT]
        for name in self.NAMES:
            cert, key = ((pki.other_cert, pki.other_key) if name == "other"
                         else (pki.server_cert, pki.server_key))
            mtls = (f"ssl_verify_client on; ssl_client_certificate {pki.ca};"
                    if name.endswith("_mtls") else "")
            blocks.append(f"""
  server {{
    listen 127.0.0.1:{self.ports[name]} ssl;
    ssl_certificate {cert};
    ssl_certificate_key {key};
    {mtls}
    keepalive_requests 3;
    access_log {self.logs[name]} tls_json;
    location / {{
      default_type text/plain;
      return 200 "{name} sni=$ssl_server_name reused=$ssl_session_reused client=$ssl_client_s_dn\\n";
    }}
  }}""")
        self.nginx = Nginx(http_extra="\n".join(blocks))

    def url(self, name, host="127.0.0.1"):
        return f"https://{host}:{self.ports[name]}"

    def entries(self, name, at_least=0, timeout=5.0):
        """The block's access log; waits (bounded) for at least `at_least` entries, because
        copies are never awaited by the proxy and nginx logs after answering."""
        deadline = time.monotonic() + timeout
        while True:
            path = self.logs[name]
            text = path.read_text() if path.exists() else ""
            lines = [line for line in text.split("\n") if line]
            if len(lines) >= at_least or time.monotonic() > deadline:
                return [json.loads(line) for line in lines]
            time.sleep(0.02)

    def stop(self):
        self.nginx.stop()


@pytest.fixture
def upstreams(pki, tmp_path):
    u = TlsUpstreams(pki, tmp_path)
    yield u
    u.stop()


def curl(url, *args):
    proc = subprocess.run(["curl", "-sS", "--max-time", "10", *args, url], capture_output=True,
                          text=True, timeout=30)
    return proc


def https_url(proxy, path="/"):
    return f"https://{proxy.address}{path}"


def wait_until(condition, timeout=10.0, what="condition"):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def served_serial(proxy, ca):
    """The serial number of the certificate a new connection to the proxy gets, as curl
    reports it (`-w %{certs}`), in openssl's upper-case hex."""
    r = curl(https_url(proxy), "--cacert", str(ca), "-o", "/dev/null", "-w", "%{certs}")
    assert r.returncode == 0, r.stderr
    for line in r.stdout.splitlines():
        if line.startswith("Serial Number:"):
            return line.split(":", 1)[1].strip().replace(":", "").upper()
    raise AssertionError("curl printed no serial number:\n" + r.stdout)


class HeldConnection:
    """A raw keep-alive TLS connection (Python's ssl module), verified against the CA."""

    def __init__(self, address, ca):
        host, port = address.rsplit(":", 1)
        context = ssl.create_default_context(cafile=str(ca))
        raw = socket.create_connection((host, int(port)), timeout=10)
        self.sock = context.wrap_socket(raw, server_hostname=host)
        self.buffer = b""

    def get(self, path):
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            assert chunk, "the proxy closed the held connection"
            self.buffer += chunk
        head, rest = self.buffer.split(b"\r\n\r\n", 1)
        status = int(head.split(b" ", 2)[1])
        length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        while len(rest) < length:
            chunk = self.sock.recv(65536)
            assert chunk, "the proxy closed the held connection mid-body"
            rest += chunk
        self.buffer = rest[length:]
        return status, rest[:length].decode()

    def close(self):
        self.sock.close()


# ---------------------------------------------------------------------------------------------


def test_tls_on_both_sides_with_curl_as_the_user(pki, upstreams, proxies):
    proxy = proxies("--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key),
                    "--upstream", upstreams.url("reg", host="localhost"), "--cacert", str(pki.ca),
                    "--dark", "canary=" + upstreams.url("dark"), "--regular-instances", "1",
                    "--compare", "--compare-secondary", upstreams.url("secondary"))
    # One curl, six requests on one keep-alive connection to the proxy.
    urls = [https_url(proxy, f"/r{i}") for i in range(6)]
    r = subprocess.run(["curl", "-sS", "-v", "--max-time", "10", "--cacert", str(pki.ca), *urls],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    answers = r.stdout.splitlines()
    assert len(answers) == 6 and all(a.startswith("reg sni=localhost ") for a in answers), answers
    assert "ALPN: server accepted http/1.1" in r.stderr, r.stderr
    assert r.stderr.count("Re-using existing connection") == 5, r.stderr
    # The regular upstream: SNI from the configured host name, keep-alive and resumption (nginx
    # closes after 3 requests; the proxy's next connection resumes its TLS session).
    reg = upstreams.entries("reg", at_least=6)
    assert [e["u"] for e in reg] == [f"/r{i}" for i in range(6)]
    assert {e["sni"] for e in reg} == {"localhost"}
    assert len({e["conn"] for e in reg}) == 2, reg
    assert [e["reused"] for e in reg] == [".", ".", ".", "r", "r", "r"], reg
    # Every request was copied to the dark cluster over https, with its header, and compared
    # with the secondary (https too).
    dark = upstreams.entries("dark", at_least=6)
    assert sorted(e["u"] for e in dark) == [f"/r{i}" for i in range(6)]
    assert {e["dark"] for e in dark} == {"canary"}
    assert {e["sni"] for e in dark} == {""}  # an IP address is never sent as SNI (RFC 6066)
    assert "r" in {e["reused"] for e in dark}, dark
    assert len(upstreams.entries("secondary", at_least=6)) == 6
    m = proxy.metrics()
    assert m["hammer_dark_tls_handshakes_total"] == 1
    assert m['hammer_dark_tls_handshake_failures_total{reason="error"}'] == 0
    proxy.wait_for_metric('hammer_dark_succeeded_total{cluster="canary"}', lambda v: v == 6)
    assert not any(k.startswith("hammer_dark_upstream_failures_total") for k in m), m


def test_mutual_tls_to_upstream_and_dark_cluster(pki, upstreams, proxies):
    args = ("--upstream", upstreams.url("reg_mtls"), "--dark",
            "canary=" + upstreams.url("dark_mtls"), "--regular-instances", "1",
            "--cacert", str(pki.ca))
    # Without a client certificate nginx refuses the request itself (400), which the proxy
    # passes on unchanged: it is the upstream's answer, not a proxy failure.
    anonymous = proxies(*args)
    r = curl(anonymous.url("/"), "-w", "%{http_code}", "-o", "/dev/null")
    assert r.stdout == "400", r
    # With one, both sides accept the proxy.
    proxy = proxies(*args, "--client-cert", str(pki.client_cert), "--client-key",
                    str(pki.client_key))
    r = curl(proxy.url("/m"))
    assert r.returncode == 0 and r.stdout.startswith("reg_mtls "), r
    assert "client=CN=hammer-client" in r.stdout
    dark = upstreams.entries("dark_mtls", at_least=2)  # the anonymous copy, then this one
    verified = [e for e in dark if e["verify"] == "SUCCESS"]
    assert len(verified) == 1 and verified[0]["dark"] == "canary", dark
    assert verified[0]["client"] == "CN=hammer-client"


def test_wrong_name_or_unknown_ca_is_a_502_counted_as_tls(pki, upstreams, proxies):
    wrong_name = proxies("--upstream", upstreams.url("other", host="localhost"),
                         "--cacert", str(pki.ca))
    r = curl(wrong_name.url("/"), "-w", "\n%{http_code}")
    body, status = r.stdout.rsplit("\n", 1)
    assert status == "502", r
    assert "upstream tls: certificate verification failed" in body, body
    assert wrong_name.metrics()['hammer_dark_upstream_failures_total{type="tls"}'] == 1

    unknown_ca = proxies("--upstream", upstreams.url("reg"))  # the system store only
    r = curl(unknown_ca.url("/"), "-w", "%{http_code}", "-o", "/dev/null")
    assert r.stdout == "502"
    assert unknown_ca.metrics()['hammer_dark_upstream_failures_total{type="tls"}'] == 1

    # --insecure skips verification altogether.
    insecure = proxies("--upstream", upstreams.url("other"), "--insecure")
    r = curl(insecure.url("/"))
    assert r.stdout.startswith("other "), r

    # A dark cluster with the wrong certificate: counted on the dark side, the user unaffected.
    dark_wrong = proxies("--upstream", upstreams.url("reg"), "--cacert", str(pki.ca),
                         "--dark", "canary=" + upstreams.url("other", host="localhost"),
                         "--regular-instances", "1")
    for i in range(3):
        assert curl(dark_wrong.url(f"/{i}")).stdout.startswith("reg ")
    dark_wrong.wait_for_metric('hammer_dark_failed_total{cluster="canary",type="tls"}',
                               lambda v: v == 3)
    assert dark_wrong.metrics()['hammer_dark_succeeded_total{cluster="canary"}'] == 0


def test_sighup_reloads_the_certificate_without_dropping_connections(pki, upstreams, proxies,
                                                                     tmp_path):
    cert, key = tmp_path / "live.pem", tmp_path / "live.key"
    shutil.copy(pki.server_cert, cert)
    shutil.copy(pki.server_key, key)
    proxy = proxies("--tls-cert", str(cert), "--tls-key", str(key),
                    "--upstream", upstreams.url("reg"), "--cacert", str(pki.ca))
    held = HeldConnection(proxy.address, pki.ca)
    try:
        assert held.get("/before")[0] == 200
        assert served_serial(proxy, pki.ca) == serial_of(pki.server_cert)

        new_cert, new_key = issue_leaf(pki, "rotated")
        shutil.copy(new_cert, cert)
        shutil.copy(new_key, key)
        proxy.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: served_serial(proxy, pki.ca) == serial_of(new_cert),
                   what="the new certificate")
        # The connection opened before the reload is still served.
        status, body = held.get("/after")
        assert status == 200 and body.startswith("reg "), body
        m = proxy.metrics()
        assert m['hammer_dark_tls_reloads_total{result="ok"}'] == 1

        # A broken file: the reload fails, is counted, and the certificate in force stays.
        cert.write_text("not a certificate\n")
        proxy.proc.send_signal(signal.SIGHUP)
        proxy.wait_for_metric('hammer_dark_tls_reloads_total{result="failed"}', lambda v: v == 1)
        assert served_serial(proxy, pki.ca) == serial_of(new_cert)
        assert held.get("/still")[0] == 200
    finally:
        held.close()
    proxy.stop()
    err = proxy.stderr
    assert "TLS certificate reloaded: subject /CN=localhost, serial " in err, err
    assert "TLS reload failed, keeping the previous certificate: cannot load certificate" in err


def test_handshake_failures_are_counted(pki, upstreams, proxies):
    proxy = proxies("--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key),
                    "--upstream", upstreams.url("reg"), "--cacert", str(pki.ca))
    # curl without the CA refuses the proxy's certificate: the proxy sees an alert.
    assert curl(https_url(proxy)).returncode != 0
    # Plain HTTP on the TLS port.
    assert curl(f"http://{proxy.address}/").returncode != 0
    proxy.wait_for_metric('hammer_dark_tls_handshake_failures_total{reason="error"}',
                          lambda v: v == 2)
    assert proxy.metrics()["hammer_dark_tls_handshakes_total"] == 0


@pytest.mark.parametrize("args, message", [
    (["--tls-cert", "/nonexistent/cert.pem"], "--tls-cert: cannot load certificate from "
                                              "/nonexistent/cert.pem"),
    (["--tls-key", "/x.key"], "--tls-key requires --tls-cert"),
    (["--cacert", "/nonexistent/ca.pem"], "cannot load CA certificates from /nonexistent/ca.pem"),
    (["--client-key", "/x.key"], "--client-key requires --client-cert"),
])
def test_bad_tls_flags_are_usage_errors(args, message):
    r = run_hammer(["dark", "--listen", "127.0.0.1:0", "--upstream", "https://127.0.0.1:9",
                    *args], timeout=30)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr, r.stderr


def test_serve_terminates_tls(pki):
    server = HammerServe("--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key))
    try:
        base = f"https://{server.address}"
        r = curl(base + "/", "--cacert", str(pki.ca))
        assert r.returncode == 0 and r.stdout == "ok\n", r
        assert curl(f"http://{server.address}/").returncode != 0  # plain HTTP is refused
        # hammer's own client as the load: verified, keep-alive (one handshake per connection).
        load = run_hammer(["load", "-", "-c", "2", "--cacert", str(pki.ca), "--emit", "none",
                           "-q", "--summary-json", "/dev/stdout"],
                          input_text=(base + "/bytes/100\n") * 200)
        summary = json.loads(load.stdout)
        assert summary["succeeded"] == 200, summary
        stats = json.loads(curl(base + "/_hammer/stats", "--cacert", str(pki.ca)).stdout)
        assert stats["tls"]["handshakes"] == 4, stats  # curl, 2 load connections, this curl
        assert stats["tls"]["handshake_failures"]["error"] == 1, stats
        assert "serial " + serial_of(pki.server_cert) in stats["tls"]["certificate"]
    finally:
        server.proc.send_signal(signal.SIGTERM)
        _, err = server.proc.communicate(timeout=10)
        server.stop()
    assert "hammer serve: TLS: 4 handshakes" in err, err
