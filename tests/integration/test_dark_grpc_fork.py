"""gRPC calls copied to a dark cluster and compared (issue 45, item 3), real grpcio on every
side: a grpcio client calls `hammer dark --http2 --upstream-http2`, which serves it from one
grpcio server and copies the read-only calls (--dark-grpc-methods) to another, the canary,
over HTTP/2 (--dark-http2). gRPC calls are all POST, so only the listed methods are copied,
and only when their request is one message; the rest is counted by reason. The comparison
reads gRPC: grpc-status first (a mismatch is a failure of the canary, which fails the
verdict), then the messages, read without their schema from the protobuf wire format, field
by field (body.<field>.<field>), noise rules included.
"""
import json
import queue
import threading
from concurrent import futures

import pytest

from harness import wait_for
from prerequisites import require_module

SERVICE = "hammer.test.Catalog"


def varint(n):
    out = b""
    while True:
        low, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([low])
        out += bytes([low | 0x80])


def field(number, value):
    """A protobuf field: an int as a varint, bytes or str as length-delimited."""
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def item(name, price, generated):
    """An Item message: 1 name, 2 Price {1 cents, 2 currency}, 3 generated (noise)."""
    return field(1, name) + field(2, field(1, price) + field(2, "EUR")) + field(3, generated)


class Catalog:
    """A grpcio server of SERVICE: GetItem (unary, read-only), ListItems (server streaming),
    PutItem (unary, writes), Import (client streaming), Chat (bidirectional). `price_for`
    decides GetItem's price per request; `status_for` an error status per request. Counts the
    calls per method."""

    def __init__(self, price_for, status_for=lambda request: None):
        import grpc

        self.calls = {}
        self.lock = threading.Lock()
        self.generated = 0

        def count(method):
            with self.lock:
                self.calls[method] = self.calls.get(method, 0) + 1
                self.generated += 1
                return self.generated

        def get_item(request, context):
            n = count("GetItem")
            status = status_for(request)
            if status is not None:
                context.abort(status, "the canary says no")
            return item(request.decode(), price_for(request), n)

        def list_items(request, context):
            count("ListItems")
            for i in range(3):
                yield item(f"i{i}", 100 + i, 0)

        def put_item(request, context):
            count("PutItem")
            return b""

        def import_items(requests, context):
            count("Import")
            return field(1, sum(1 for _ in requests))

        def chat(requests, context):
            count("Chat")
            for request in requests:
                yield request

        handler = grpc.method_handlers_generic_handler(SERVICE, {
            "GetItem": grpc.unary_unary_rpc_method_handler(get_item),
            "ListItems": grpc.unary_stream_rpc_method_handler(list_items),
            "PutItem": grpc.unary_unary_rpc_method_handler(put_item),
            "Import": grpc.stream_unary_rpc_method_handler(import_items),
            "Chat": grpc.stream_stream_rpc_method_handler(chat)})
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        self.server.add_generic_rpc_handlers((handler,))
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.url = f"http://127.0.0.1:{self.port}"
        self.server.start()

    def count(self, method):
        with self.lock:
            return self.calls.get(method, 0)

    def stop(self):
        self.server.stop(grace=None)


@pytest.fixture
def catalogs():
    require_module("grpc", "scripts/python-deps.sh (grpcio in tests/integration/requirements.txt)")
    started = []

    def start(*args, **kwargs):
        started.append(Catalog(*args, **kwargs))
        return started[-1]

    yield start
    for catalog in started:
        catalog.stop()


def forking_proxy(proxies, primary, canary, *extra):
    return proxies("--http2", "--upstream-http2", "--upstream", primary.url,
                   "--dark", f"canary={canary.url}", "--dark-http2", "canary",
                   "--regular-instances", "1", "--dark-grpc-methods", f"/{SERVICE}/Get*",
                   "--dark-grpc-methods", f"/{SERVICE}/List*", *extra)


def settled(proxy, endpoint_name, n):
    """The report's row for the endpoint once n of its calls were recorded on both sides."""
    report = json.loads(proxy.get_admin("/hammer/dark/report"))
    endpoint = next((e for e in report["endpoints"] if e["endpoint"] == endpoint_name), None)
    return endpoint if endpoint and endpoint["pairs"] >= n else None


def call_everything(address, get_requests):
    """Calls every method once (GetItem once per request in get_requests) and returns what the
    client saw of GetItem."""
    import grpc

    answers = []
    with grpc.insecure_channel(address) as ch:
        for request in get_requests:
            answers.append(ch.unary_unary(f"/{SERVICE}/GetItem")(request, timeout=10))
        assert len(list(ch.unary_stream(f"/{SERVICE}/ListItems")(b"", timeout=10))) == 3
        ch.unary_unary(f"/{SERVICE}/PutItem")(b"x", timeout=10)
        assert ch.stream_unary(f"/{SERVICE}/Import")(iter([b"a", b"b"]), timeout=10) == \
            field(1, 2)
        q = queue.Queue()
        chat = ch.stream_stream(f"/{SERVICE}/Chat")(iter(q.get, None), timeout=10)
        for message in (b"hi", b"ho"):
            q.put(message)
            assert next(chat) == message
        q.put(None)
        assert list(chat) == []
    return answers


def test_listed_unary_calls_are_copied_and_the_rest_counted_by_reason(catalogs, proxies):
    primary = catalogs(lambda request: 100)
    canary = catalogs(lambda request: 100)
    proxy = forking_proxy(proxies, primary, canary)
    answers = call_everything(proxy.address, [b"a", b"b", b"c"])
    assert answers == [item(name, 100, n) for name, n in (("a", 1), ("b", 2), ("c", 3))]
    m = proxy.settled_metrics()
    assert m['hammer_dark_sent_total{cluster="canary"}'] == 4  # GetItem x3, ListItems
    assert m['hammer_dark_succeeded_total{cluster="canary"}'] == 4
    assert canary.count("GetItem") == 3 and canary.count("ListItems") == 1
    assert canary.count("PutItem") == canary.count("Import") == canary.count("Chat") == 0
    # PutItem, Import and Chat are not listed.
    assert m['hammer_dark_not_forked_total{reason="grpc_unlisted"}'] == 3
    assert m['hammer_dark_not_forked_total{reason="grpc_streaming"}'] == 0
    assert m['hammer_dark_not_forked_total{reason="upgrade"}'] == 0


def test_a_listed_client_streaming_call_is_not_copied(catalogs, proxies):
    primary = catalogs(lambda request: 100)
    canary = catalogs(lambda request: 100)
    proxy = proxies("--http2", "--upstream-http2", "--upstream", primary.url,
                    "--dark", f"canary={canary.url}", "--dark-http2", "canary",
                    "--regular-instances", "1", "--dark-grpc-methods", f"/{SERVICE}/*")
    call_everything(proxy.address, [b"a"])
    m = proxy.settled_metrics()
    # Import and Chat send two messages each: client streams, never copied (a unary call and
    # a stream of one message look alike on the wire, and both are copied). GetItem, ListItems
    # and PutItem (listed here by the glob) are.
    assert m['hammer_dark_not_forked_total{reason="grpc_streaming"}'] == 2, m
    assert canary.count("Import") == canary.count("Chat") == 0
    assert canary.count("GetItem") == canary.count("PutItem") == canary.count("ListItems") == 1


def test_the_comparison_reads_protobuf_fields_and_grpc_status(catalogs, proxies):
    import grpc

    primary = catalogs(lambda request: 100)
    # The canary's price differs for requests starting with "p"; it fails "f..." UNAVAILABLE.
    canary = catalogs(lambda request: 90 if request.startswith(b"p") else 100,
                      lambda request: grpc.StatusCode.UNAVAILABLE
                      if request.startswith(b"f") else None)
    proxy = forking_proxy(proxies, primary, canary, "--compare", "--compare-ignore", "body.3")
    requests = [b"p1", b"p2", b"s1", b"s2", b"s3", b"f1"]
    call_everything(proxy.address, requests)
    endpoint = wait_for(lambda: settled(proxy, f"POST /{SERVICE}/GetItem", len(requests)),
                        timeout=30, what="every forked call recorded")
    assert endpoint["dark_failures"] == 1, endpoint  # f1: UNAVAILABLE against OK
    assert endpoint["total"] == 5, endpoint
    assert endpoint["differences"] == 2, endpoint
    fields = {f["path"]: f for f in endpoint["fields"]}
    assert fields["body.2.1"]["raw"] == 2, fields  # the price's cents
    assert "body.3" not in fields  # ignored: a counter that always differs
    assert "body.1" not in fields and "body.2.2" not in fields
    # The verdict counts the mismatch as the canary's failure (too few calls here to judge).
    verdict = json.loads(proxy.get_admin("/hammer/dark/verdict"))
    errors = next(r for r in verdict["clusters"][0]["overall"]["rules"]
                  if r["rule"].startswith("error_increase"))
    assert errors["dark_failures"] == 1, errors
