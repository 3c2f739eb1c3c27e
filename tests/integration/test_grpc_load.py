"""gRPC unary calls as load (issue 15, item 4), against a real gRPC server: grpcio (PyPI, pinned
in requirements.txt, installed by scripts/python-deps.sh), serving methods with raw-bytes
messages (generic handlers: no generated code needed).

A call is a request-file entry with `content-type: application/grpc` and a length-prefixed
message body (gRPC over HTTP/2, grpc/grpc doc/PROTOCOL-HTTP2.md, "Length-Prefixed-Message": a
compressed-flag byte, a 4-byte big-endian length, the message): base64 in a JSON targets file,
the bytes of an @file in vegeta's http format. The grpc-status trailer (or a Trailers-Only
answer's head) decides success; a non-zero status is the failure type grpc_status, counted like
the others, and the summary counts the calls by status.
"""
import base64
import json
import struct
import threading
import time
from concurrent import futures

import pytest

from harness import run_hammer
from prerequisites import require_module

SERVICE = "hammer.test.Items"


def framed(message):
    return b"\x00" + struct.pack(">I", len(message)) + message


class GrpcServer:
    """grpcio on one loopback port (h2c, or TLS with the test PKI's server certificate).

    /hammer.test.Items/Get answers b"item " + the request, or, for a request
    b"status:<code>:<message>", ends the call with that status and message.
    /hammer.test.Items/Slow sleeps the number of milliseconds the request names, then answers.
    Every request received is kept in `calls` (method name, request bytes)."""

    def __init__(self, pki=None):
        import grpc

        self.calls = []
        self.lock = threading.Lock()

        def get(request, context):
            self._keep("Get", request)
            if request.startswith(b"status:"):
                _, code, message = request.split(b":", 2)
                status = next(s for s in grpc.StatusCode if s.value[0] == int(code))
                context.abort(status, message.decode())
            return b"item " + request

        def slow(request, context):
            self._keep("Slow", request)
            time.sleep(int(request) / 1000)
            return b"slept " + request

        handler = grpc.method_handlers_generic_handler(
            SERVICE, {"Get": grpc.unary_unary_rpc_method_handler(get),
                      "Slow": grpc.unary_unary_rpc_method_handler(slow)})
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        self.server.add_generic_rpc_handlers((handler,))
        if pki is None:
            self.port = self.server.add_insecure_port("127.0.0.1:0")
            self.scheme = "http"
        else:
            credentials = grpc.ssl_server_credentials(
                [(pki.server_key.read_bytes(), pki.server_cert.read_bytes())])
            self.port = self.server.add_secure_port("127.0.0.1:0", credentials)
            self.scheme = "https"
        assert self.port != 0
        self.server.start()

    def _keep(self, method, request):
        with self.lock:
            self.calls.append((method, request))

    def url(self, method):
        return f"{self.scheme}://127.0.0.1:{self.port}/{SERVICE}/{method}"

    def stop(self):
        self.server.stop(grace=None)


@pytest.fixture
def grpc_server():
    require_module("grpc", "scripts/python-deps.sh (grpcio in tests/integration/requirements.txt)")
    servers = []

    def start(pki=None):
        servers.append(GrpcServer(pki))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def jsonl_targets(tmp_path, calls, te=True):
    """A JSON targets file: one entry per (url, message)."""
    header = {"Content-Type": ["application/grpc"]}
    if te:
        header["TE"] = ["trailers"]
    rows = [{"method": "POST", "url": url, "header": header,
             "body": base64.b64encode(framed(message)).decode()} for url, message in calls]
    path = tmp_path / "calls.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def load(targets, tmp_path, *args, targets_format="jsonl"):
    summary = tmp_path / "summary.json"
    r = run_hammer(["load", str(targets), "--targets-format", targets_format, "--http2",
                    "--summary-json", str(summary), *args])
    assert summary.exists(), r.stderr
    return r, json.loads(summary.read_text())


def test_grpc_status_decides_success_and_each_status_is_counted(grpc_server, tmp_path):
    server = grpc_server()
    get = server.url("Get")
    calls = [(get, b"a"), (get, b"b"), (get, b"status:14:try later"), (get, b"c"),
             (get, b"status:3:bad id \xc3\xa9 100%"), (get, b"status:14:again")]
    r, s = load(jsonl_targets(tmp_path, calls), tmp_path, "-c", "1", "-m", "4",
                "--failure-types", "--hadoop-counters")
    assert r.returncode == 0, r.stderr
    assert (s["requests"], s["succeeded"], s["failed"]) == (6, 3, 3), r.stderr
    assert s["failures"] == {"grpc_status": 3}
    assert s["grpc_statuses"] == {"OK": 3, "INVALID_ARGUMENT": 1, "UNAVAILABLE": 2}
    assert r.error_counter("grpc_status") == 3
    # Every call reached the server whole (the length-prefixed message decoded by grpcio).
    assert sorted(m for _, m in server.calls) == sorted(m for _, m in calls)
    # Records: a time for each success, the failure type for each failure (--failure-types).
    assert sorted(r.records) == sorted([f"{get}\t\tgrpc_status"] * 3 +
                                       [rec for rec in r.records if not rec.endswith("status")])
    assert len([rec for rec in r.records if rec.split("\t")[1]]) == 3
    # The summary names the code and the percent-decoded grpc-message.
    assert "grpc-status  OK 3, INVALID_ARGUMENT 1, UNAVAILABLE 2" in r.stderr
    assert "e.g. " + get + ": grpc-status " in r.stderr


def test_failure_detail_names_code_and_decoded_message(grpc_server, tmp_path):
    server = grpc_server()
    calls = [(server.url("Get"), b"status:3:bad id \xc3\xa9 100%")]
    r, s = load(jsonl_targets(tmp_path, calls), tmp_path, "--verbose", "1")
    assert s["failures"] == {"grpc_status": 1}, r.stderr
    assert "grpc_status: grpc-status 3 INVALID_ARGUMENT: bad id \u00e9 100%" in r.stderr


def test_a_status_without_a_message_is_a_trailers_only_answer(grpc_server, tmp_path):
    """grpcio ends a call that fails before any message with Trailers-Only: grpc-status in the
    one HEADERS frame, which hammer reads from the head (--verbose shows it there, not as a
    trailer)."""
    server = grpc_server()
    calls = [(server.url("Get"), b"status:5:no such item")]
    r, s = load(jsonl_targets(tmp_path, calls), tmp_path, "--verbose", "1")
    assert s["grpc_statuses"] == {"NOT_FOUND": 1}, r.stderr
    assert "\n< grpc-status: 5\n" in r.stderr
    assert "[trailer] grpc-status" not in r.stderr


def test_te_trailers_is_added_when_the_file_lacks_it(grpc_server, tmp_path):
    """grpcio resets a stream without `te: trailers`; hammer adds it to gRPC calls."""
    server = grpc_server()
    calls = [(server.url("Get"), b"x")] * 3
    r, s = load(jsonl_targets(tmp_path, calls, te=False), tmp_path, "--verbose", "1")
    assert (s["succeeded"], s["failed"]) == (3, 0), r.stderr
    assert "> TE: trailers" in r.stderr


def test_slow_calls_latency_counts_the_whole_call(grpc_server, tmp_path):
    server = grpc_server()
    calls = [(server.url("Slow"), b"300"), (server.url("Get"), b"quick")]
    r, s = load(jsonl_targets(tmp_path, calls), tmp_path, "-c", "2")
    assert (s["succeeded"], s["failed"]) == (2, 0), r.stderr
    # The slow call cannot have taken less than the server's sleep; the quick one was faster.
    assert s["latency"]["max_us"] >= 300_000
    assert s["latency"]["min_us"] < 300_000
    rows = {row["key"]: row for row in s["keys"]}
    assert rows[server.url("Slow")]["latency"]["min_us"] >= 300_000


def test_a_call_slower_than_the_timeout_is_a_timeout(grpc_server, tmp_path):
    server = grpc_server()
    calls = [(server.url("Slow"), b"2000"), (server.url("Get"), b"quick")]
    r, s = load(jsonl_targets(tmp_path, calls), tmp_path, "-c", "2", "--timeout", "500ms")
    assert s["failures"] == {"timeout": 1}, r.stderr
    assert s["grpc_statuses"] == {"OK": 1}  # a call that timed out has no status


def test_vegeta_targets_with_binary_body_file(grpc_server, tmp_path):
    server = grpc_server()
    (tmp_path / "ok.bin").write_bytes(framed(b"\x0a\x01\x61\x00\xff"))
    (tmp_path / "fail.bin").write_bytes(framed(b"status:7:denied"))
    targets = tmp_path / "calls.txt"
    targets.write_text(
        f"POST {server.url('Get')}\nContent-Type: application/grpc+proto\n@ok.bin\n\n"
        f"POST {server.url('Get')}\nContent-Type: application/grpc+proto\n@fail.bin\n")
    r, s = load(targets, tmp_path, targets_format="vegeta")
    assert (s["succeeded"], s["failed"]) == (1, 1), r.stderr
    assert s["grpc_statuses"] == {"OK": 1, "PERMISSION_DENIED": 1}
    assert sorted(m for _, m in server.calls) == [b"\x0a\x01\x61\x00\xff", b"status:7:denied"]


def test_threshold_and_counters_like_any_failure(grpc_server, tmp_path):
    server = grpc_server()
    get = server.url("Get")
    calls = [(get, b"x"), (get, b"status:14:down")] * 10
    r, s = load(jsonl_targets(tmp_path, calls), tmp_path, "-c", "2", "-m", "2",
                "--threshold", "errors<10%", "--hadoop-counters")
    assert r.returncode == 3, r.stderr  # half of the calls failed
    assert r.error_counter("grpc_status") == 10
    assert s["grpc_statuses"] == {"OK": 10, "UNAVAILABLE": 10}


def test_grpc_over_tls_with_alpn_h2(grpc_server, pki, tmp_path):
    server = grpc_server(pki)
    get = server.url("Get")
    calls = [(get, b"t1"), (get, b"status:16:who are you"), (get, b"t2")]
    r, s = load(jsonl_targets(tmp_path, calls), tmp_path, "-c", "1", "-m", "2",
                "--cacert", str(pki.ca))
    assert (s["succeeded"], s["failed"]) == (2, 1), r.stderr
    assert s["failures"] == {"grpc_status": 1}
    assert s["grpc_statuses"] == {"OK": 2, "UNAUTHENTICATED": 1}
    assert s["tls_handshakes"] == 1
    assert sorted(m for _, m in server.calls) == sorted(m for _, m in calls)


def test_an_http_server_that_is_not_grpc_is_a_protocol_failure(serve, tmp_path):
    """A 200 without grpc-status (hammer serve over h2c) is not a successful call."""
    calls = [(serve.url("/hello"), b"x")]
    r, s = load(jsonl_targets(tmp_path, calls), tmp_path, "--verbose", "1")
    assert s["failures"] == {"protocol": 1}, r.stderr
    assert "gRPC answer without grpc-status" in r.stderr
    assert "grpc_statuses" not in s


def test_a_grpc_call_without_http2_fails_saying_it_needs_it(grpc_server, tmp_path):
    """grpcio speaks only HTTP/2: asked in HTTP/1.1 it closes the connection."""
    server = grpc_server()
    targets = jsonl_targets(tmp_path, [(server.url("Get"), b"x")])
    summary = tmp_path / "summary.json"
    r = run_hammer(["load", str(targets), "--targets-format", "jsonl", "--summary-json",
                    str(summary)])
    s = json.loads(summary.read_text())
    assert s["failed"] == 1 and "grpc_statuses" not in s, r.stderr
    assert "(gRPC calls need --http2)" in r.stderr
