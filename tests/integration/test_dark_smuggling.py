"""Request smuggling and desync corpus through `hammer dark`, with nginx as the reference.

Each vector is sent raw on its own connection, once through `hammer dark` and once through a
real nginx (`proxy_pass`), each in front of its own RawRecorder (raw_recorder.py: it records
the exact bytes a proxy forwarded). hammer must never forward bytes that a second parser could
read as another request: it either rejects the vector (400/413/501, nothing forwarded) or
normalises it (the recorder's bytes parse strictly, with nothing left over, as exactly one
request). The table of outcomes, hammer's beside nginx's, is printed (pytest -s shows it).

Vectors follow the published request-smuggling classes: CL.TE and TE.CL (both framings at
once), TE.TE (obfuscated Transfer-Encoding), conflicting Content-Length, obs-fold, bad chunk
sizes and chunk extensions, bare LF/CR, NUL and other controls in fields, absolute-form, and
Host confusion (RFC 9112 §6.1, §6.3, §7.1, §3.2; RFC 9110 §5.5).
"""
import pytest

from dark_support import DarkProxy
from harness import Nginx
from raw_recorder import RawRecorder, raw_exchange, status_of, strict_requests, StrictError

REJECT, NORMALISE = "reject", "normalise"

H = b"Host: target.example\r\n"
HIDDEN = b"GET /admin HTTP/1.1\r\nHost: x\r\n\r\n"

# (name, raw request, what hammer must do)
VECTORS = [
    ("CL.TE", b"POST / HTTP/1.1\r\n" + H + b"Content-Length: 6\r\nTransfer-Encoding: chunked\r\n"
     b"\r\n0\r\n\r\nG", REJECT),
    ("TE.CL", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n"
     b"\r\n8\r\nSMUGGLED\r\n0\r\n\r\n", REJECT),
    ("TE.TE xchunked", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: xchunked\r\n\r\n"
     b"0\r\n\r\n", REJECT),
    ("TE.TE chunked + second TE", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n"
     b"Transfer-Encoding: x\r\n\r\n0\r\n\r\n", REJECT),
    ("TE.TE space before colon", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding : chunked\r\n"
     b"\r\n0\r\n\r\n", REJECT),
    ("TE.TE vertical tab", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: \x0bchunked\r\n"
     b"\r\n0\r\n\r\n", REJECT),
    ("TE.TE obs-fold", b"POST / HTTP/1.1\r\n" + H + b"X-Pad: x\r\n Transfer-Encoding: chunked\r\n"
     b"\r\n0\r\n\r\n", REJECT),
    ("TE gzip, chunked", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: gzip, chunked\r\n"
     b"\r\n0\r\n\r\n", REJECT),
    ("TE CHUNKED (case)", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: CHUNKED\r\n\r\n"
     b"5\r\nhello\r\n0\r\n\r\n", NORMALISE),
    ("CL conflicting lines", b"POST / HTTP/1.1\r\n" + H + b"Content-Length: 5\r\n"
     b"Content-Length: 6\r\n\r\nhello!", REJECT),
    ("CL conflicting list", b"POST / HTTP/1.1\r\n" + H + b"Content-Length: 5, 6\r\n\r\nhello!",
     REJECT),
    ("CL repeated equal", b"POST / HTTP/1.1\r\n" + H + b"Content-Length: 5\r\n"
     b"Content-Length: 5\r\n\r\nhello", NORMALISE),
    ("CL plus sign", b"POST / HTTP/1.1\r\n" + H + b"Content-Length: +5\r\n\r\nhello", REJECT),
    ("CL hex", b"POST / HTTP/1.1\r\n" + H + b"Content-Length: 0x5\r\n\r\nhello", REJECT),
    ("CL huge", b"POST / HTTP/1.1\r\n" + H + b"Content-Length: 99999999999999999999\r\n\r\n",
     REJECT),
    ("GET with body hiding a request", b"GET / HTTP/1.1\r\n" + H + b"Content-Length: %d\r\n\r\n"
     % len(HIDDEN) + HIDDEN, NORMALISE),
    ("obs-fold", b"GET / HTTP/1.1\r\n" + H + b"X-Folded: a\r\n b\r\n\r\n", REJECT),
    ("chunk size negative", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n"
     b"-1\r\nx\r\n0\r\n\r\n", REJECT),
    ("chunk size 0x prefix", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n"
     b"0x5\r\nhello\r\n0\r\n\r\n", REJECT),
    ("chunk size overflow", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n"
     b"10000000000000001\r\nx\r\n0\r\n\r\n", REJECT),
    ("chunk data without CRLF", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n"
     b"\r\n3\r\nabcX\r\n0\r\n\r\n", REJECT),
    ("chunk extension", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n"
     b"5;name=value\r\nhello\r\n0\r\n\r\n", NORMALISE),
    ("chunk extension with bare LF", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked"
     b"\r\n\r\n5;a=\nb\r\nhello\r\n0\r\n\r\n", REJECT),
    # Trailers pass on, but never one that frames or routes (RFC 9110 §6.5.1).
    ("chunk trailer framing fields", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked"
     b"\r\n\r\n5\r\nhello\r\n0\r\nX-Trailer: kept\r\nContent-Length: 9\r\n"
     b"Host: evil.example\r\nTransfer-Encoding: chunked\r\n\r\n", NORMALISE),
    ("bare LF line endings", b"GET / HTTP/1.1\n" + H.replace(b"\r\n", b"\n") + b"\n", NORMALISE),
    ("bare LF inside a field", b"GET / HTTP/1.1\r\n" + H + b"X-A: 1\nX-B: 2\r\n\r\n", NORMALISE),
    ("bare CR inside a field", b"GET / HTTP/1.1\r\n" + H + b"X-A: 1\rX-B: 2\r\n\r\n", REJECT),
    ("NUL in a field", b"GET / HTTP/1.1\r\n" + H + b"X-A: a\x00b\r\n\r\n", REJECT),
    ("NUL in the target", b"GET /a\x00b HTTP/1.1\r\n" + H + b"\r\n", REJECT),
    ("space in the target", b"GET /a b HTTP/1.1\r\n" + H + b"\r\n", REJECT),
    ("absolute-form", b"GET http://evil.example/admin HTTP/1.1\r\n" + H + b"\r\n", NORMALISE),
    ("authority-form", b"CONNECT evil.example:443 HTTP/1.1\r\n" + H + b"\r\n", REJECT),
    ("duplicate Host", b"GET / HTTP/1.1\r\n" + H + b"Host: evil.example\r\n\r\n", REJECT),
    ("missing Host", b"GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", REJECT),
    ("Host with userinfo", b"GET / HTTP/1.1\r\nHost: user@evil.example\r\n\r\n", REJECT),
    ("HTTP/1.0 with TE chunked", b"POST / HTTP/1.0\r\n" + H + b"Transfer-Encoding: chunked\r\n"
     b"\r\n5\r\nhello\r\n0\r\n\r\n", NORMALISE),
    ("Connection naming Content-Length", b"POST / HTTP/1.1\r\n" + H + b"Connection: "
     b"Content-Length\r\nContent-Length: 5\r\n\r\nhello", NORMALISE),
    # h2c smuggling: an upstream that took the upgrade would then read HTTP/2 straight from the
    # client, past the proxy. Forwarded as an ordinary request without the upgrade.
    ("Upgrade h2c", b"GET / HTTP/1.1\r\n" + H + b"Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__"
     b"\r\nConnection: Upgrade, HTTP2-Settings\r\n\r\n", NORMALISE),
    ("Upgrade websocket, h2c", b"GET / HTTP/1.1\r\n" + H + b"Upgrade: websocket, h2c\r\n"
     b"Connection: Upgrade\r\n\r\n", NORMALISE),
]

NGINX_PROXY = """
worker_processes 1;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 256; }}
http {{
  access_log off;
  client_body_temp_path {prefix}/body;
  proxy_temp_path {prefix}/proxy;
  fastcgi_temp_path {prefix}/fastcgi;
  uwsgi_temp_path {prefix}/uwsgi;
  scgi_temp_path {prefix}/scgi;
  {http_extra}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://{server_extra};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }}
  }}
}}
"""


def outcome(response, recorder, before):
    """What one vector did: (status or 'closed', what the recorder got from it)."""
    status = status_of(response)
    data = b"".join(recorder.connections())[before:]
    if not data:
        forwarded = "nothing"
    else:
        try:
            requests, rest = strict_requests(data)
            forwarded = f"{len(requests)} request(s)" + (f" + {len(rest)} stray bytes"
                                                          if rest else "")
        except StrictError as e:
            forwarded = f"unreadable ({e})"
    return (status if status is not None else "closed"), forwarded, data


@pytest.fixture(scope="module")
def chain():
    hammer_recorder, nginx_recorder = RawRecorder(), RawRecorder()
    proxy = DarkProxy("--upstream", hammer_recorder.url())
    nginx = Nginx(config=NGINX_PROXY, server_extra=nginx_recorder.address)
    yield proxy, hammer_recorder, nginx, nginx_recorder
    nginx.stop()
    proxy.stop()
    hammer_recorder.stop()
    nginx_recorder.stop()


def test_smuggling_corpus(chain):
    proxy, hammer_recorder, nginx, nginx_recorder = chain
    rows, failures = [], []
    for name, request, expected in VECTORS:
        results = []
        for address, recorder in ((proxy.address, hammer_recorder),
                                  (nginx.address, nginx_recorder)):
            before = len(b"".join(recorder.connections()))
            response = raw_exchange(address, request)
            results.append(outcome(response, recorder, before))
        (h_status, h_forwarded, h_data), (n_status, n_forwarded, _) = results
        rows.append((name, expected, f"{h_status} / {h_forwarded}", f"{n_status} / {n_forwarded}"))
        if expected == REJECT:
            ok = h_status in (400, 413, 501) and h_forwarded == "nothing"
        else:
            ok = h_status == 200 and h_forwarded == "1 request(s)"
            if ok:
                (forwarded,), _ = strict_requests(h_data)
                # Normalised: origin-form, one Host (the upstream's), Content-Length framing
                # (chunked when trailers follow the body; the recorder refuses a trailer that
                # frames or routes).
                chunked = [b"chunked"] if forwarded.trailers else []
                ok = (forwarded.target.startswith(b"/") and
                      forwarded.values("host") == [hammer_recorder.address.encode()] and
                      forwarded.values("transfer-encoding") == chunked and
                      forwarded.values("upgrade") == [] and
                      forwarded.values("http2-settings") == [] and
                      b"evil.example" not in h_data and b"smuggled" not in h_data)
        if not ok:
            failures.append(f"{name}: expected {expected}, hammer gave {h_status} / "
                            f"{h_forwarded}: {h_data!r}")
    width = max(len(r[0]) for r in rows)
    print("\n" + f"{'vector':{width}}  {'hammer must':9}  {'hammer dark':32}  nginx proxy_pass")
    for name, expected, hammer, ng in rows:
        print(f"{name:{width}}  {expected:9}  {hammer:32}  {ng}")
    assert not failures, "\n".join(failures)
    # Every vector was sent once to each side and answered or refused: nothing hung.
    assert proxy.metrics()["hammer_dark_requests_total"] == sum(
        1 for _, _, e in VECTORS if e == NORMALISE) + sum(
        1 for n, _, e in VECTORS if e == REJECT and n == "authority-form")
