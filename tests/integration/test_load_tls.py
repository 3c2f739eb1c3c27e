"""`hammer load` over TLS against nginx with certificates from a CA made by the test (tls_pki.py):
verification by IP and by name, SNI, session resumption, wrong names, an unknown CA, --insecure,
a --cacert that cannot be loaded. What nginx received is read from its JSON access log
(logged_nginx.py)."""
import pytest

from harness import run_hammer, summary_of, url_lines
from logged_nginx import TlsNginx


def test_tls_verified_with_the_test_ca_by_ip_and_by_name(start_nginx, pki, tmp_path):
    server = TlsNginx(start_nginx, pki, tmp_path)
    summary = tmp_path / "s.json"
    text = url_lines(*[server.url("127.0.0.1")] * 3, *[server.url("localhost")] * 3)
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--cacert", str(pki.ca),
                    "--summary-json", str(summary)], input_text=text)
    assert r.returncode == 0, r.stderr
    s = summary_of(summary)
    assert (s["succeeded"], s["failed"]) == (6, 0), r.stderr
    # One connection per origin, each with one full handshake; 3 requests each on keep-alive.
    assert s["tls_handshakes"] == s["connections_opened"] == 2, s
    log = server.log.entries()
    assert len(log) == 6
    assert {e["proto"] for e in log} <= {"TLSv1.2", "TLSv1.3"}
    # SNI is sent for a name and, as RFC 6066 says, not for an IP literal.
    assert [e["sni"] for e in log] == [""] * 3 + ["localhost"] * 3
    assert len({e["conn"] for e in log}) == 2
    assert "tls          2 handshakes" in r.stderr


@pytest.mark.parametrize("session_config", [
    pytest.param("", id="nginx-defaults-tickets"),
    pytest.param("ssl_session_cache shared:hammer:1m; ssl_session_tickets off;",
                 id="session-id-cache"),
    pytest.param("ssl_protocols TLSv1.3;", id="tls13-tickets"),
])
def test_tls_sessions_resume_after_the_server_closes(start_nginx, pki, tmp_path,
                                                     session_config):
    # keepalive_requests 5: nginx closes after 5 requests, so 12 requests need 3 connections.
    server = TlsNginx(start_nginx, pki, tmp_path, extra=session_config)
    summary = tmp_path / "s.json"
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--cacert", str(pki.ca),
                    "--summary-json", str(summary)],
                   input_text=url_lines(*[server.url("localhost")] * 12))
    assert r.returncode == 0, r.stderr
    s = summary_of(summary)
    assert (s["succeeded"], s["tls_handshakes"], s["connections_opened"]) == (12, 3, 3), s
    log = server.log.entries()
    # Server side: the first request of connections 2 and 3 arrived on a resumed session.
    assert [e["reused"] for e in log if e["n"] == "1"] == [".", "r", "r"], log
    assert s["tls_resumed"] == 2, s


@pytest.mark.parametrize("host,reason", [
    ("localhost", "certificate verification failed: hostname mismatch"),
    ("127.0.0.1", "certificate verification failed: IP address mismatch"),
])
def test_tls_certificate_for_another_name_is_a_tls_failure(start_nginx, pki, tmp_path, host,
                                                           reason):
    server = TlsNginx(start_nginx, pki, tmp_path)
    r = run_hammer(["load", "--hadoop-counters", "-", "-c", "1", "-t", "1", "--cacert", str(pki.ca)],
                   input_text=url_lines(*[server.other_url(host)] * 3))
    assert r.returncode == 0, r.stderr
    assert r.failures() == [server.other_url(host) + "\t"] * 3
    assert r.error_counter("tls") == 3
    assert reason.lower() in r.stderr.lower(), r.stderr
    assert server.log.entries() == []  # no request got through

    # --insecure: no verification at all, so the same certificate is accepted.
    r = run_hammer(["load", "--hadoop-counters", "-", "-c", "1", "-t", "1", "--insecure"],
                   input_text=url_lines(*[server.other_url(host)] * 3))
    assert r.returncode == 0, r.stderr
    assert len(r.successes()) == 3 and r.counters.get(("error", "tls"), 0) == 0, r.stderr
    assert len(server.log.entries()) == 3


def test_tls_unknown_ca_without_cacert_is_a_tls_failure(start_nginx, pki, tmp_path):
    server = TlsNginx(start_nginx, pki, tmp_path)
    urls = [server.url("127.0.0.1"), server.url("localhost")]
    r = run_hammer(["load", "--hadoop-counters", "-", "-c", "1", "-t", "1"], input_text=url_lines(*urls))
    assert r.returncode == 0, r.stderr
    assert r.error_counter("tls") == 2 and not r.successes()
    assert "certificate verification failed: unable to get local issuer certificate" in r.stderr
    # --insecure accepts the certificate the system store does not know.
    r = run_hammer(["load", "-", "-c", "1", "-t", "1", "--insecure"], input_text=url_lines(*urls))
    assert len(r.successes()) == 2, r.stderr


def test_tls_cacert_that_cannot_be_loaded_is_a_usage_error(tmp_path):
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("not a certificate\n")
    for path in (tmp_path / "missing.pem", not_pem):
        r = run_hammer(["load", "-", "--cacert", str(path)], input_text="https://127.0.0.1:1/\n")
        assert r.returncode == 2, r.stderr
        assert f"--cacert: cannot load CA certificates from {path}" in r.stderr
