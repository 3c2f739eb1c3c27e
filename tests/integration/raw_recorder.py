"""RawRecorder: an upstream for proxy tests that records the exact bytes it receives.

It is a recorder, not an HTTP double: what matters is the byte stream a proxy forwarded, kept
per connection exactly as read. To keep the proxy's connection going it reads the stream with
`strict_requests` (a deliberately strict HTTP/1.1 request parser: CRLF line endings only, no
obs-fold, no control bytes, exactly one Host, Content-Length xor `Transfer-Encoding: chunked`,
well-formed chunks, a trailer section of well-formed fields that neither frame nor route) and
answers each complete request `200` with the body
`recorded <n>` (n counts requests over the recorder's life); on bytes it cannot read strictly
it answers 400 and closes. Tests then parse `connections()` again with `strict_requests` to
check that every forwarded request reads as exactly one request.

Binds 127.0.0.1 on a port chosen by the kernel; traffic never leaves loopback.
"""
import re
import socket
import threading

_TOKEN = re.compile(rb"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_TARGET = re.compile(rb"^[\x21-\x7e]+$")
_FIELD_VALUE = re.compile(rb"^[\t\x20-\x7e\x80-\xff]*$")


class StrictError(ValueError):
    pass


class StrictRequest:
    def __init__(self, method, target, version, headers, body, raw):
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers  # [(name, value)] as bytes, in order
        self.body = body
        self.trailers = []  # [(name, value)] of a chunked body's trailer section
        self.raw = raw

    def values(self, name):
        name = name.lower().encode() if isinstance(name, str) else name.lower()
        return [v for n, v in self.headers if n.lower() == name]

    def value(self, name):
        values = self.values(name)
        return values[0].decode("latin-1") if values else None


def _parse_one(data):
    """One request from the start of `data`: (StrictRequest, consumed), or None if incomplete.
    Raises StrictError for anything a strict server would refuse."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        text = data[:-1] if data.endswith(b"\r") else data
        if re.search(rb"(?<!\r)\n|\r(?!\n)", text):
            raise StrictError("bare LF or CR in head")
        return None
    head = data[:end]
    lines = head.split(b"\r\n")
    for line in lines:
        if b"\n" in line or b"\r" in line:
            raise StrictError("bare LF or CR in head")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not _TOKEN.match(parts[0]) or not _TARGET.match(parts[1]):
        raise StrictError(f"bad request line {lines[0]!r}")
    if parts[2] not in (b"HTTP/1.1", b"HTTP/1.0"):
        raise StrictError(f"bad version {parts[2]!r}")
    headers = []
    for line in lines[1:]:
        if line[:1] in (b" ", b"\t"):
            raise StrictError("obs-fold")
        name, sep, value = line.partition(b":")
        if not sep or not _TOKEN.match(name):
            raise StrictError(f"bad field line {line!r}")
        value = value.strip(b" \t")
        if not _FIELD_VALUE.match(value):
            raise StrictError(f"control byte in field {name!r}")
        headers.append((name, value))
    request = StrictRequest(parts[0], parts[1], parts[2], headers, b"", b"")
    trailers = []
    hosts = request.values("host")
    if len(hosts) != 1:
        raise StrictError(f"{len(hosts)} Host fields")
    lengths = request.values("content-length")
    codings = request.values("transfer-encoding")
    pos = end + 4
    if codings:
        if lengths or [c.lower() for c in codings] != [b"chunked"]:
            raise StrictError(f"framing: TE {codings!r} CL {lengths!r}")
        body = b""
        while True:
            line_end = data.find(b"\r\n", pos)
            if line_end < 0:
                return None
            size_text = data[pos:line_end]
            if not re.fullmatch(rb"[0-9A-Fa-f]{1,16}", size_text):
                raise StrictError(f"bad chunk size {size_text!r}")
            size = int(size_text, 16)
            pos = line_end + 2
            if size == 0:
                parsed = _trailer_section(data, pos)
                if parsed is None:
                    return None
                trailers, pos = parsed
                break
            if len(data) < pos + size + 2:
                return None
            if data[pos + size:pos + size + 2] != b"\r\n":
                raise StrictError("chunk not followed by CRLF")
            body += data[pos:pos + size]
            pos += size + 2
    elif lengths:
        if len(lengths) != 1 or not re.fullmatch(rb"[0-9]{1,18}", lengths[0]):
            raise StrictError(f"bad Content-Length {lengths!r}")
        size = int(lengths[0])
        if len(data) < pos + size:
            return None
        body = data[pos:pos + size]
        pos += size
    else:
        body = b""
    request.body = body
    request.trailers = trailers
    request.raw = data[:pos]
    return request, pos


def _trailer_section(data, pos):
    """The trailer section after a last chunk (RFC 9112 §7.1.2) at `pos`: ([(name, value)],
    the position after its empty line), or None if incomplete. Field lines are read as strictly
    as the head's, and a field that frames or routes a message has no place there."""
    trailers = []
    while True:
        line_end = data.find(b"\r\n", pos)
        if line_end < 0:
            if re.search(rb"(?<!\r)\n|\r(?!\n|$)", data[pos:]):
                raise StrictError("bare LF or CR in trailers")
            return None
        line = data[pos:line_end]
        pos = line_end + 2
        if not line:
            return trailers, pos
        if b"\n" in line or b"\r" in line:
            raise StrictError("bare LF or CR in trailers")
        name, sep, value = line.partition(b":")
        value = value.strip(b" \t")
        if not sep or not _TOKEN.match(name) or not _FIELD_VALUE.match(value):
            raise StrictError(f"bad trailer line {line!r}")
        if name.lower() in (b"content-length", b"transfer-encoding", b"host", b"connection"):
            raise StrictError(f"{name!r} in trailers")
        trailers.append((name, value))


def strict_requests(data):
    """Every request in `data`, strictly: (requests, leftover bytes). Raises StrictError."""
    requests = []
    while data:
        parsed = _parse_one(data)
        if parsed is None:
            break
        request, used = parsed
        requests.append(request)
        data = data[used:]
    return requests, data


class RawRecorder:
    """Records each accepted connection's bytes; answers strictly parsed requests with 200."""

    def __init__(self):
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self._lock = threading.Lock()
        self._connections = []  # bytearray per accepted connection
        self._answered = 0
        self._closed = False
        self._thread = threading.Thread(target=self._accept_loop, daemon=True)
        self._thread.start()

    def url(self, path=""):
        return f"http://{self.address}{path}"

    def _accept_loop(self):
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            record = bytearray()
            with self._lock:
                self._connections.append(record)
            threading.Thread(target=self._serve, args=(conn, record), daemon=True).start()

    def _serve(self, conn, record):
        pending = b""
        with conn:
            conn.settimeout(30)
            while True:
                try:
                    chunk = conn.recv(65536)
                except OSError:
                    return
                if not chunk:
                    return
                with self._lock:
                    record.extend(chunk)
                pending += chunk
                try:
                    requests, pending = strict_requests(pending)
                except StrictError as e:
                    body = f"not strict HTTP/1.1: {e}\n".encode()
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n"
                                 b"Content-Length: %d\r\n\r\n" % len(body) + body)
                    return
                for _ in requests:
                    with self._lock:
                        self._answered += 1
                        body = f"recorded {self._answered}\n".encode()
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                 b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def connections(self):
        """The bytes of every connection so far, in accept order."""
        with self._lock:
            return [bytes(c) for c in self._connections]

    def received(self):
        """Every request received so far, strictly parsed, over all connections."""
        out = []
        for data in self.connections():
            requests, _ = strict_requests(data)
            out.extend(requests)
        return out

    def stop(self):
        self._listener.close()


def raw_exchange(address, data, timeout=10):
    """Sends `data` on a new connection to "host:port" and returns the first response read
    (head and Content-Length body), or whatever came before the server closed or `timeout`
    passed (b"" if nothing). The connection is not half-closed: some servers (hammer among
    them) drop a request whose client shut its sending side."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        while True:
            end = out.find(b"\r\n\r\n")
            if end >= 0:
                match = re.search(rb"(?im)^content-length:\s*(\d+)\s*$", out[:end])
                length = int(match.group(1)) if match else 0
                if len(out) >= end + 4 + length:
                    return out[:end + 4 + length]
            try:
                chunk = s.recv(65536)
            except OSError:
                return out
            if not chunk:
                return out
            out += chunk


def status_of(response):
    """The status code of a raw response, or None if there is none."""
    match = re.match(rb"HTTP/1\.[01] (\d{3})", response)
    return int(match.group(1)) if match else None
