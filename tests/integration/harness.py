"""Helpers shared by the integration tests: run hammer, start real servers on loopback.

Every server here binds 127.0.0.1 on a free port and is stopped by the fixture that started
it. Nothing in the tests sends traffic anywhere else.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HAMMER = os.environ.get("HAMMER", str(ROOT / "build" / "release" / "hammer"))
ARTIFACTS = ROOT / "tests" / "integration" / ".artifacts"


# Ports handed to servers the tests start come from below the kernel's ephemeral range, so no
# connect() or port-0 bind anywhere on the machine is given one of them, and each is reserved
# for this process's lifetime by a lock on a file of its own (flock: released by the kernel
# when the process ends, however it ends), so two test processes never hand out the same port.
_PORT_LOCKS = Path(tempfile.gettempdir()) / "hammer-test-ports"
_PORTS_FIRST = 20000
_held_ports = {}  # port -> the open lock file that reserves it


def _ephemeral_low():
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port():
    """A loopback TCP port that nothing listens on and that no other caller of free_port(), in
    this process or another, gets until this process ends."""
    import fcntl
    _PORT_LOCKS.mkdir(exist_ok=True)
    last = _ephemeral_low() - 1
    start = _PORTS_FIRST + (os.getpid() * 37) % max(1, last - _PORTS_FIRST)
    span = last - _PORTS_FIRST + 1
    for i in range(span):
        port = _PORTS_FIRST + (start - _PORTS_FIRST + i) % span
        if port in _held_ports:
            continue
        lock = open(_PORT_LOCKS / str(port), "a")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                lock.close()
                continue
        _held_ports[port] = lock
        return port
    raise RuntimeError(f"no free port in {_PORTS_FIRST}-{last}")


def wait_for_port(port, timeout=10.0, host="127.0.0.1"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise TimeoutError(f"nothing listening on {host}:{port} after {timeout}s")


class Result:
    """What a `hammer load` run produced: records, stderr, exit code, Hadoop counters."""

    def __init__(self, proc):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.records = [line for line in proc.stdout.split("\n") if line]
        self.counters = {}
        for line in proc.stderr.splitlines():
            m = re.match(r"reporter:counter:([^,]+),([^,]+),(\d+)$", line)
            if m:
                key = (m.group(1), m.group(2))
                self.counters[key] = self.counters.get(key, 0) + int(m.group(3))

    def error_counter(self, kind):
        return self.counters.get(("error", kind), 0)

    def successes(self):
        return [r for r in self.records if not r.endswith("\t")]

    def failures(self):
        return [r for r in self.records if r.endswith("\t")]

    def due_times(self):
        """[(key, when the request was due, in Unix seconds)] for the success records of a run
        with --timestamps (KEY<TAB>SECONDS<TAB>END_MS), in record order. An open-loop or
        --har-timing latency counts from the due time, so the due time is the end less the
        latency: hammer's own schedule, whatever the machine's load made of the sending. Within
        about a millisecond: the end is written in whole ms, read just after the request ended."""
        due = []
        for record in self.successes():
            key, seconds, end_ms = record.split("\t")
            due.append((key, int(end_ms) / 1000 - float(seconds)))
        return due


def run_hammer(args, input_text=None, timeout=120, env=None):
    proc = subprocess.run([HAMMER] + list(args), input=input_text, capture_output=True,
                          text=True, timeout=timeout, env=env, errors="replace")
    return Result(proc)


def url_lines(*urls):
    """A request list: one URL a line."""
    return "".join(u + "\n" for u in urls)


def summary_of(path):
    """The JSON a --summary-json FILE holds."""
    return json.loads(Path(path).read_text())


def memory_kib(pid, field="VmRSS"):
    """A process's memory from /proc/PID/status: VmRSS (resident now) or VmHWM (its peak)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


class HammerServe:
    """`hammer serve` on an ephemeral loopback port (or `listen`, another loopback address).
    `wrapper` runs it under another command (e.g. prlimit) that execs it, so the process id
    stays hammer's."""

    def __init__(self, *extra, wrapper=(), listen="127.0.0.1:0"):
        self.proc = subprocess.Popen([*wrapper, HAMMER, "serve", "--listen", listen, *extra],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.address = self.proc.stdout.readline().strip()
        if not self.address:
            raise RuntimeError("hammer serve did not start: " + self.proc.stderr.read())
        self.host, port = self.address.rsplit(":", 1)
        self.port = int(port)

    def url(self, path="/"):
        return f"http://{self.address}{path}"

    def stats(self):
        import urllib.request
        with urllib.request.urlopen(self.url("/_hammer/stats"), timeout=5) as r:
            return json.loads(r.read())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()


NGINX_BASE = """
worker_processes {workers};
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  client_body_temp_path {prefix}/body;
  proxy_temp_path {prefix}/proxy;
  fastcgi_temp_path {prefix}/fastcgi;
  uwsgi_temp_path {prefix}/uwsgi;
  scgi_temp_path {prefix}/scgi;
  keepalive_requests 1000000;
  {http_extra}
  server {{
    listen 127.0.0.1:{port};
    {server_extra}
    location = /status/500 {{ return 500 "error\\n"; }}
    location = /status/404 {{ return 404 "not found\\n"; }}
    location = /error-content {{ default_type text/plain; return 200 "Api::Error: boom\\n"; }}
    location /redirect-loop {{ return 302 /redirect-loop; }}
    location / {{ default_type text/plain; return 200 "ok\\n"; }}
  }}
}}
"""


class Nginx:
    """A real nginx on a loopback port, with its own prefix directory."""

    def __init__(self, workers=1, http_extra="", server_extra="", port=None, config=None):
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.prefix = Path(tempfile.mkdtemp(prefix="hammer-nginx-"))
        for d in ("body", "proxy", "fastcgi", "uwsgi", "scgi", "logs"):
            (self.prefix / d).mkdir()
        self.port = port or free_port()
        text = config or NGINX_BASE
        conf = text.format(workers=workers, prefix=self.prefix, port=self.port,
                           http_extra=http_extra, server_extra=server_extra)
        (self.prefix / "nginx.conf").write_text(conf)
        self.proc = subprocess.Popen([nginx, "-p", str(self.prefix), "-c",
                                      str(self.prefix / "nginx.conf")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            wait_for_port(self.port)
        except TimeoutError:
            self.proc.kill()
            raise RuntimeError("nginx did not start: " + self.proc.stderr.read().decode() +
                               (self.prefix / "error.log").read_text(errors="replace"))
        self.address = f"127.0.0.1:{self.port}"

    def url(self, path="/"):
        return f"http://{self.address}{path}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.prefix, ignore_errors=True)


class ClosedPort:
    """A loopback port where every connection is refused, reserved while this object is open.

    The socket is bound and never listens: no other process can bind the port, and a connect to
    it gets a RST (ECONNREFUSED). A port freed and handed out again could be taken by anyone in
    between. Use it as a context manager or call close()."""

    def __init__(self):
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]

    def url(self, path="/", scheme="http"):
        return f"{scheme}://127.0.0.1:{self.port}{path}"

    def close(self):
        self._sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class BlackHole:
    """A hand-made double for a fault no real server produces on cue: a loopback listener that
    never answers. Named as such in every test that uses it.

    kind="unanswered": accepts every connection and reads (and drops) what arrives, but never
        writes a byte; connections stay open until close(). `accepted` counts them.
    kind="unaccepted": listens with a backlog of 0 and never calls accept(); the one connection
        the kernel's accept queue holds is taken by this object itself, so every further SYN is
        dropped and a client's connect() times out.
    """

    def __init__(self, kind):
        if kind not in ("unanswered", "unaccepted"):
            raise ValueError(kind)
        self.kind = kind
        self.accepted = 0
        self._closed = threading.Event()
        self._held = []
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self._thread = None
        if kind == "unaccepted":
            self._sock.listen(0)
            filler = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            self._held.append(filler)
            self._wait_for_full_queue()
        else:
            self._sock.listen(128)
            self._sock.settimeout(0.1)
            self._thread = threading.Thread(target=self._serve, daemon=True,
                                            name=f"black-hole-{self.port}")
            self._thread.start()

    def _wait_for_full_queue(self, timeout=5.0):
        # A second connect must now time out; probe until the kernel drops the SYN.
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            probe.settimeout(0.3)
            try:
                probe.connect(("127.0.0.1", self.port))
            except (socket.timeout, TimeoutError):
                return
            except OSError:
                pass
            else:
                self._held.append(probe)  # the queue took one more; keep it filled
                continue
            finally:
                if probe not in self._held:
                    probe.close()
        raise RuntimeError(f"the accept queue of {self.address} never filled")

    def _serve(self):
        import selectors
        selector = selectors.DefaultSelector()
        selector.register(self._sock, selectors.EVENT_READ)
        while not self._closed.is_set():
            for key, _ in selector.select(timeout=0.1):
                if key.fileobj is self._sock:
                    try:
                        conn, _ = self._sock.accept()
                    except OSError:
                        continue
                    self.accepted += 1
                    conn.setblocking(False)
                    self._held.append(conn)
                    selector.register(conn, selectors.EVENT_READ)
                else:
                    try:
                        data = key.fileobj.recv(65536)
                    except OSError:
                        data = b""
                    if not data:  # the client gave up: forget the connection
                        selector.unregister(key.fileobj)
                        key.fileobj.close()
        selector.close()

    def url(self, path="/"):
        return f"http://{self.address}{path}"

    def close(self):
        self._closed.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for conn in self._held:
            conn.close()
        self._held.clear()
        self._sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def rss_kib(pid):
    """VmRSS of a process, KiB (Linux /proc)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def wait_for(predicate, timeout=10.0, what="condition"):
    """Polls predicate() until it returns something true and returns that; the deadline is a
    safety net against a hang, never a synchronisation."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not reached in {timeout}s")
        time.sleep(0.02)


def started_until_teardown(factory):
    """A fixture's body: yields start(*args, **kwargs), which makes a factory(*args, **kwargs)
    and returns it; every one made is stopped when the test ends, whatever its outcome."""
    started = []

    def start(*args, **kwargs):
        item = factory(*args, **kwargs)
        started.append(item)
        return item

    yield start
    for item in started:
        item.stop()
