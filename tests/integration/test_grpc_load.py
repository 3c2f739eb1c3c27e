"""gRPC unary calls as load (issue 15, item 4), against a real gRPC server: grpcio (PyPI, pinned
in requirements.txt), serving one method with raw-bytes messages (no generated code needed).

A call is a request-file entry with `content-type: application/grpc` and a length-prefixed
message body (gRPC over HTTP/2, "Length-Prefixed-Message": a compressed flag byte, a 4-byte
big-endian length, the message). The grpc-status trailer decides success; a non-zero status is
the failure type grpc_status, counted like the others.
"""
import base64
import json
import struct
from concurrent import futures

import pytest

from harness import run_hammer
from prerequisites import require_module

METHOD = "/hammer.test.Items/Get"


def framed(message):
    return b"\x00" + struct.pack(">I", len(message)) + message


@pytest.fixture
def grpc_server():
    require_module("grpc", "scripts/python-deps.sh (grpcio in tests/integration/requirements.txt)")
    import grpc

    calls = []

    def get(request, context):
        calls.append(request)
        if request.startswith(b"missing:"):
            context.abort(grpc.StatusCode.NOT_FOUND, "no item " + request[8:].decode())
        return b"item " + request

    handler = grpc.method_handlers_generic_handler(
        "hammer.test.Items", {"Get": grpc.unary_unary_rpc_method_handler(get)})
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    server.port = port
    server.calls = calls
    yield server
    server.stop(grace=None)


def targets_file(tmp_path, port, messages):
    rows = [{"method": "POST", "url": f"http://127.0.0.1:{port}{METHOD}",
             "header": {"Content-Type": ["application/grpc"], "TE": ["trailers"]},
             "body": base64.b64encode(framed(m)).decode()} for m in messages]
    path = tmp_path / "calls.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_grpc_status_decides_success_and_non_zero_is_its_own_failure(grpc_server, tmp_path):
    messages = [b"a", b"b", b"missing:c", b"d", b"missing:e"]
    targets = targets_file(tmp_path, grpc_server.port, messages)
    summary = tmp_path / "s.json"
    r = run_hammer(["load", str(targets), "--targets-format", "jsonl", "--http2", "-c", "1",
                    "-m", "4", "-t", "1", "--summary-json", str(summary), "--verbose", "5"])
    assert r.returncode == 0, r.stderr
    s = json.loads(summary.read_text())
    assert (s["requests"], s["succeeded"], s["failed"]) == (5, 3, 2), r.stderr
    assert s["failures"] == {"grpc_status": 2}
    assert sorted(grpc_server.calls) == sorted(messages)  # every call reached the server whole
    assert "grpc-status 5 NOT_FOUND: no item c" in r.stderr
    assert len(r.successes()) == 3 and len(r.failures()) == 2


def test_grpc_threshold_and_counters_like_any_failure(grpc_server, tmp_path):
    targets = targets_file(tmp_path, grpc_server.port, [b"x", b"missing:y"] * 10)
    r = run_hammer(["load", str(targets), "--targets-format", "jsonl", "--http2", "-c", "2",
                    "-m", "2", "-t", "1", "--threshold", "errors<10%", "--hadoop-counters"])
    assert r.returncode == 3, r.stderr  # half of the calls failed
    assert r.error_counter("grpc_status") == 10, r.stderr
