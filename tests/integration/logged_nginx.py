"""nginx on loopback with a JSON access log: what the server received, checked on the server side.

nginx writes one JSON object per request (method, URI, chosen headers, body, TLS details, end
time) to an access log in the test's tmp dir:
  LoggedNginx  plain HTTP: /echo and /delay/ proxied to `hammer serve` (so nginx reads and logs
               request bodies), redirect chains and loops, a cookie-protected location;
  TlsNginx     the test CA's localhost/127.0.0.1 certificate on one port and a certificate for
               other.test only on another (tls_pki.py).
Every nginx here runs one worker, so requests are logged in the order they end.
"""
import itertools
import json
import ssl
import time
import urllib.error
import urllib.request
from pathlib import Path

from harness import free_port

# One JSON object per request; escape=json keeps bodies with quotes, newlines and UTF-8 exact.
# t is the time the request was logged ($msec, after the response), rt its duration.
LOG_FORMAT = (
    "log_format hammer_json escape=json '{"
    '"t":"$msec","rt":"$request_time","m":"$request_method","u":"$request_uri","s":"$status",'
    '"x":"$http_x_test","g":"$http_x_global","ck":"$http_cookie","auth":"$http_authorization",'
    '"ct":"$content_type","cl":"$http_content_length","ua":"$http_user_agent",'
    '"b":"$request_body","sni":"$ssl_server_name","proto":"$ssl_protocol",'
    '"reused":"$ssl_session_reused","conn":"$connection","n":"$connection_requests"'
    "}';"
)

MARKER_PATH = "/.hammer-log-marker"
_markers = itertools.count(1)


class AccessLog:
    """The access log of one nginx (LOG_FORMAT).

    nginx logs a request just after sending its response, so a client (hammer) may have its
    answer, and have exited, before the line is written. entries() therefore first sends a
    marker request of its own through the same nginx and waits until the marker is logged: as
    nginx runs one worker, every request that ended before the call is in the log by then.
    `marker_url` is a URL on that nginx (https with `ssl_context`); markers never appear in
    the entries returned."""

    def __init__(self, path, marker_url=None, ssl_context=None):
        self.path = Path(path)
        self.path.touch()
        self.marker_url = marker_url
        self.ssl_context = ssl_context

    def _lines(self):
        text = self.path.read_text(encoding="utf-8", errors="surrogateescape")
        return [json.loads(line) for line in text.split("\n") if line]

    def entries(self, timeout=10.0):
        """Every request logged so far (markers left out), after the marker barrier."""
        assert self.marker_url, "AccessLog.marker_url is not set"
        marker = f"{MARKER_PATH}?n={next(_markers)}"
        try:
            with urllib.request.urlopen(self.marker_url.rstrip("/") + marker, timeout=timeout,
                                        context=self.ssl_context) as reply:
                reply.read()
        except urllib.error.HTTPError:
            pass  # a proxied marker may get an error status: it is logged all the same
        deadline = time.monotonic() + timeout
        while True:
            logged = self._lines()
            if any(e["u"] == marker for e in logged):
                return [e for e in logged if not e["u"].startswith(MARKER_PATH)]
            if time.monotonic() > deadline:
                raise AssertionError(f"nginx did not log the marker {marker} in {timeout}s")
            time.sleep(0.02)

    def clear(self):
        self.path.write_text("")  # nginx appends (O_APPEND), so truncation is safe


class LoggedNginx:
    """nginx on loopback with the JSON access log, /echo and /delay/ proxied to `hammer serve`
    (so nginx reads and logs request bodies), redirect chains and a cookie-protected
    location."""

    def __init__(self, start_nginx, serve, tmp_path, extra=""):
        port = free_port()
        self.log = AccessLog(tmp_path / "access.log", marker_url=f"http://127.0.0.1:{port}")
        self.nginx = start_nginx(port=port, http_extra=LOG_FORMAT, server_extra=f"""
    access_log {self.log.path} hammer_json;
    client_body_buffer_size 1m;
    location = /echo {{ proxy_pass http://{serve.address}; }}
    location /delay/ {{ proxy_pass http://{serve.address}; }}
    location = /chain/a {{ absolute_redirect off; return 301 /chain/b; }}
    location = /chain/b {{ return 302 http://127.0.0.1:{port}/chain/c; }}
    location = /chain/c {{ return 200 "target\\n"; }}
    location = /loop/x {{ return 301 /loop/y; }}
    location = /loop/y {{ return 302 /loop/x; }}
    location = /login {{ add_header Set-Cookie "sid=abc; Path=/"; return 200 "welcome\\n"; }}
    location = /private {{
      if ($cookie_sid != "abc") {{ return 403 "forbidden\\n"; }}
      return 200 "private\\n";
    }}
    {extra}""")
        self.url = self.nginx.url


class TlsNginx:
    """nginx with the test CA's localhost/127.0.0.1 certificate on `port` and a certificate for
    other.test only on `other_port`; plain HTTP stays on the harness port. Both TLS servers
    write to one access log."""

    def __init__(self, start_nginx, pki, tmp_path, extra=""):
        self.port, self.other_port = free_port(), free_port()
        self.log = AccessLog(tmp_path / "tls-access.log", marker_url=self.url(),
                             ssl_context=ssl.create_default_context(cafile=str(pki.ca)))
        self.nginx = start_nginx(
            http_extra=LOG_FORMAT + f"""
  server {{
    listen 127.0.0.1:{self.other_port} ssl;
    ssl_certificate {pki.other_cert};
    ssl_certificate_key {pki.other_key};
    access_log {self.log.path} hammer_json;
    location / {{ return 200 "other\\n"; }}
  }}""",
            server_extra=f"""
    listen 127.0.0.1:{self.port} ssl;
    ssl_certificate {pki.server_cert};
    ssl_certificate_key {pki.server_key};
    keepalive_requests 5;
    access_log {self.log.path} hammer_json;
    {extra}""")

    def url(self, host="127.0.0.1", path="/"):
        return f"https://{host}:{self.port}{path}"

    def other_url(self, host="127.0.0.1", path="/"):
        return f"https://{host}:{self.other_port}{path}"
