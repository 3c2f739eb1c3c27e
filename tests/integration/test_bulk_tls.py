"""`hammer route` and `hammer bulk` over TLS: nginx terminates TLS (certificates from a CA made
with openssl, tls_pki.py) in front of a real one-node OpenSearch 2.19, which publishes nginx's
port as its HTTP address (`http.publish_port`), so the node address hammer discovers is the TLS
one and every request, discovery and _bulk alike, crosses nginx. nginx's JSON access log says
what arrived and over which protocol.

  --cacert           the test CA is trusted: routing and indexing work, every request over TLS;
  no --cacert        the CA is unknown: a clear certificate error, nothing sent;
  --insecure         no verification: works without the CA;
  an expired certificate, a certificate for another name: refused with a clear error, even
                     with --cacert, and no request reaches nginx's upstream.
"""
import json
import ssl
import subprocess

import pytest

import opensearch
import prerequisites
from harness import HAMMER, Nginx, free_port
from logged_nginx import AccessLog

# What the TLS servers log: enough to tell what arrived and how (bodies left out: bulk bodies).
TLS_LOG_FORMAT = (
    "log_format bulk_tls escape=json '{"
    '"t":"$msec","m":"$request_method","u":"$request_uri","s":"$status",'
    '"proto":"$ssl_protocol","sni":"$ssl_server_name","port":"$server_port"'
    "}';"
)
INDEX_SHARDS = 3


class TlsCluster:
    def __init__(self, cluster, nginx, ports, log):
        self.cluster = cluster
        self.nginx = nginx
        self.ports = ports  # "tls", "expired", "other" -> nginx TLS port
        self.log = log

    def url(self, server="tls", host="127.0.0.1"):
        return f"https://{host}:{self.ports[server]}"


@pytest.fixture(scope="module")
def tls_cluster(pki, tmp_path_factory):
    prerequisites.require_built(opensearch.TOOL_DIR, opensearch.JAR, "opensearch")
    tmp = tmp_path_factory.mktemp("bulk-tls")
    node_port = free_port()
    ports = {"tls": free_port(), "expired": free_port(), "other": free_port()}
    certificates = {"tls": (pki.server_cert, pki.server_key),
                    "expired": (pki.expired_cert, pki.expired_key),
                    "other": (pki.other_cert, pki.other_key)}
    log = AccessLog(tmp / "tls-access.log")
    servers = ""
    for name, (cert, key) in certificates.items():
        servers += f"""
  server {{
    listen 127.0.0.1:{ports[name]} ssl;
    ssl_certificate {cert};
    ssl_certificate_key {key};
    access_log {log.path} bulk_tls;
    # Bodies pass through memory: nginx's workers (nobody) cannot write the temp directories.
    client_max_body_size 0;
    client_body_buffer_size 16m;
    proxy_request_buffering off;
    proxy_buffering off;
    location / {{ proxy_pass http://127.0.0.1:{node_port}; }}
  }}"""
    nginx = Nginx(http_extra=TLS_LOG_FORMAT + servers)
    log.marker_url = f"https://127.0.0.1:{ports['tls']}"
    log.ssl_context = ssl.create_default_context(cafile=str(pki.ca))
    cluster = opensearch.OpenSearchCluster(
        nodes=1, heap="768m", cluster_name="hammer-tls", http_ports=[node_port],
        settings={"http.publish_port": ports["tls"]})
    try:
        cluster.start(build_jar=False)
        # The node publishes nginx's port; the test itself talks to the node directly.
        cluster.node(0).http_port = node_port
        yield TlsCluster(cluster, nginx, ports, log)
    finally:
        cluster.stop()
        nginx.stop()


def hammer(*args, input_text=None):
    return subprocess.run([HAMMER, *args], input=input_text, capture_output=True, text=True,
                          timeout=300)


def create_index(cluster, name):
    cluster.request("DELETE", f"/{name}")
    status, body = cluster.request("PUT", f"/{name}", {"settings": {
        "number_of_shards": INDEX_SHARDS, "number_of_replicas": 0}})
    assert status == 200, body
    status, body = cluster.request("GET", f"/_cluster/health/{name}?wait_for_status=green"
                                          "&timeout=60s")
    assert status == 200 and not body["timed_out"], body


def documents(n, prefix):
    return "".join(json.dumps({"id": f"{prefix}{i}", "n": i}) + "\n" for i in range(n))


def keys(stdout):
    return [int(line.split("\t", 1)[0]) for line in stdout.splitlines()]


def test_route_and_bulk_over_tls_with_the_test_ca(tls_cluster, pki, tmp_path):
    c = tls_cluster.cluster
    create_index(c, "tls-docs")
    text = documents(3000, "t")
    routed = hammer("route", "--cluster", tls_cluster.url(), "--index", "tls-docs",
                    "--id-field", "id", "--cacert", str(pki.ca), input_text=text)
    assert routed.returncode == 0, routed.stderr
    offline = hammer("route", "--shards", str(INDEX_SHARDS), "--distribution", "opensearch",
                     "--id-field", "id", input_text=text)
    assert keys(routed.stdout) == keys(offline.stdout) and len(keys(routed.stdout)) == 3000

    summary, dead = tmp_path / "summary.json", tmp_path / "dead.jsonl"
    bulk = hammer("bulk", "--cluster", tls_cluster.url(), "--index", "tls-docs", "--id-field",
                  "id", "--batch-docs", "500", "--cacert", str(pki.ca), "--summary-json",
                  str(summary), "--dead-letter", str(dead), input_text=text)
    assert bulk.returncode == 0, bulk.stderr
    s = json.loads(summary.read_text())
    assert (s["documents_read"], s["indexed"], s["dead_lettered"]) == (3000, 3000, 0), \
        (s, bulk.stderr, dead.read_text()[:2000])
    # The node hammer discovered is nginx's TLS address: no request went anywhere else.
    assert [n["address"] for n in s["nodes"]] == [f"127.0.0.1:{tls_cluster.ports['tls']}"]
    assert s["requests_off_primary"] == 0
    c.request("POST", "/tls-docs/_refresh")
    assert c.request("GET", "/tls-docs/_count")[1]["count"] == 3000

    log = tls_cluster.log.entries()
    assert log and all(e["proto"] in ("TLSv1.2", "TLSv1.3") for e in log), log[:3]
    assert {e["port"] for e in log} == {str(tls_cluster.ports["tls"])}
    bulk_posts = [e for e in log if e["m"] == "POST" and e["u"].startswith("/tls-docs/_bulk")]
    assert len(bulk_posts) == s["requests"] and all(e["s"] == "200" for e in bulk_posts)
    assert any(e["u"].startswith("/_cat/shards/tls-docs") for e in log)  # discovery, too
    c.request("DELETE", "/tls-docs")


def test_unknown_ca_is_refused_and_insecure_accepts_it(tls_cluster, tmp_path):
    c = tls_cluster.cluster
    create_index(c, "tls-insecure")
    text = documents(500, "i")
    tls_cluster.log.clear()
    for command in (["route"], ["bulk"]):
        proc = hammer(*command, "--cluster", tls_cluster.url(), "--index", "tls-insecure",
                      "--id-field", "id", input_text=text)
        assert proc.returncode == 1, proc.stderr
        assert "certificate verification failed: unable to get local issuer certificate" in \
            proc.stderr, proc.stderr
    assert tls_cluster.log.entries() == []  # nothing got through

    routed = hammer("route", "--cluster", tls_cluster.url(), "--index", "tls-insecure",
                    "--id-field", "id", "--insecure", input_text=text)
    assert routed.returncode == 0 and len(routed.stdout.splitlines()) == 500, routed.stderr
    summary = tmp_path / "summary.json"
    bulk = hammer("bulk", "--cluster", tls_cluster.url(), "--index", "tls-insecure",
                  "--id-field", "id", "--insecure", "--summary-json", str(summary),
                  input_text=text)
    assert bulk.returncode == 0, bulk.stderr
    assert json.loads(summary.read_text())["indexed"] == 500
    c.request("POST", "/tls-insecure/_refresh")
    assert c.request("GET", "/tls-insecure/_count")[1]["count"] == 500
    c.request("DELETE", "/tls-insecure")


@pytest.mark.parametrize("server,host,reason", [
    ("expired", "127.0.0.1", "certificate verification failed: certificate has expired"),
    ("other", "127.0.0.1", "certificate verification failed: IP address mismatch"),
    ("other", "localhost", "certificate verification failed: hostname mismatch"),
])
def test_expired_and_wrong_name_certificates_are_refused(tls_cluster, pki, server, host,
                                                         reason):
    c = tls_cluster.cluster
    create_index(c, "tls-refused")
    text = documents(200, "r")
    tls_cluster.log.clear()
    for command in (["route"], ["bulk"]):
        proc = hammer(*command, "--cluster", tls_cluster.url(server, host), "--index",
                      "tls-refused", "--id-field", "id", "--cacert", str(pki.ca),
                      input_text=text)
        assert proc.returncode == 1, proc.stderr
        assert reason.lower() in proc.stderr.lower(), proc.stderr
        assert proc.stdout == ""
    assert tls_cluster.log.entries() == []  # no request reached nginx's upstream
    c.request("POST", "/tls-refused/_refresh")
    assert c.request("GET", "/tls-refused/_count")[1]["count"] == 0
    c.request("DELETE", "/tls-refused")
