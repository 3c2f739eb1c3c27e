"""The harness every benchmark in bench/ shares (standard library only).

- Processes: `start` runs a command in a session of its own and remembers it, so that every
  exit path of the benchmark (normal, exception, SIGINT/SIGTERM/SIGHUP once `install_cleanup`
  has run) kills it and its children; `run_measured` runs one to its end and returns its
  rusage (wait4: user+sys CPU of the process and the children it waited for).
- Servers: `Nginx` (one worker, from a conf template over NGINX_HTTP_HEAD), `start_hammer`
  (`hammer serve` or `dark`, their addresses read from stdout), `stop`, `free_port`,
  `answers_ok`, `https_get`, `make_certificates`, `snapshot_hammer`.
- Pinning and priority: `Pinning` (taskset on the first or last CPU allowed),
  `set_autogroup_nice`.
- CPU from /proc: `proc_cpu_seconds`, `tree_cpu_seconds`, `children_of`, `cpu_jiffies`,
  `machine_busy`.
- Generators compared by CPU per request (load_engine, tls_engine, h2_engine): `Tool`, the
  parsers of each tool's own report, `run_tool`, `run_rounds`, `syscall_profile`,
  `cpu_table`.
- Figures: `median`, `span` (median and range over rounds), `round_ratio` (a ratio formed
  within each round), `RunInfo` (the host and load line every summary starts with),
  `write_results`.
"""
from __future__ import annotations

import atexit
import datetime
import http.client
import json
import os
import platform
import re
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import threading
import time
from typing import Callable

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLK_TCK = os.sysconf("SC_CLK_TCK")


def default_hammer() -> str:
    """$HAMMER (set by bench/run.sh), else the Makefile's release build."""
    return os.environ.get("HAMMER", os.path.join(REPO, "build", "release", "hammer"))


def default_build_dir() -> str:
    return os.path.join(REPO, "build", "bench")


def env_int(name: str, default: int) -> int:
    """BENCH_ROUNDS and BENCH_DURATION: bench/run.sh's overrides of a benchmark's defaults."""
    return int(os.environ.get(name, default))


# ---------------------------------------------------------------------------------------------
# Processes the benchmark started: killed on every way out.

_started: list[subprocess.Popen] = []
_before_kill: list[Callable[[], None]] = []
_atexit_registered = False
_signals_handled = False


def _kill_all() -> None:
    for hook in _before_kill:
        try:
            hook()
        except Exception:  # noqa: BLE001 - best effort on the way out
            pass
    for p in _started:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.time() + 3
    for p in _started:
        while p.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
    _started.clear()


def _exit_on_signal(signum, _frame):
    sys.exit(128 + signum)


def install_cleanup(before_kill: Callable[[], None] | None = None) -> None:
    """Kills every process `start` or `track` registered when the benchmark exits, including by
    SIGINT, SIGTERM or SIGHUP (turned into a normal exit; signal handlers can only be set from
    the main thread, so a benchmark whose first process starts on another thread calls this
    first). `before_kill` runs first (e.g. a cluster harness's own shutdown)."""
    global _atexit_registered, _signals_handled
    if before_kill is not None:
        _before_kill.append(before_kill)
    if not _atexit_registered:
        _atexit_registered = True
        atexit.register(_kill_all)
    if not _signals_handled and threading.current_thread() is threading.main_thread():
        _signals_handled = True
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(s, _exit_on_signal)


def track(p: subprocess.Popen) -> subprocess.Popen:
    """Registers a process started in a session of its own, so that the exit kills its group."""
    _started.append(p)
    return p


def untrack(p: subprocess.Popen) -> None:
    if p in _started:
        _started.remove(p)


def start(argv: list[str], nice: int = 0, **popen_args) -> subprocess.Popen:
    """Starts ARGV in a new session (its own process group and scheduler autogroup), registered
    for the exit's cleanup, its autogroup at NICE (see set_autogroup_nice)."""
    install_cleanup()
    p = track(subprocess.Popen(argv, start_new_session=True, **popen_args))
    if nice:
        set_autogroup_nice(p.pid, nice)
    return p


def run_measured(argv: list[str], timeout: float, nice: int = 0, **popen_args):
    """Runs ARGV to its end (killed after TIMEOUT seconds): (exit status, wall seconds, rusage).
    The rusage is wait4's: the process's own CPU and that of the children it waited for
    (taskset and nice exec the command, so the process is the command itself)."""
    t0 = time.monotonic()
    p = start(argv, nice=nice, **popen_args)
    killer = threading.Timer(timeout, lambda: os.killpg(p.pid, signal.SIGKILL))
    killer.start()
    try:
        _, status, rusage = os.wait4(p.pid, 0)
    finally:
        killer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    untrack(p)
    return p.returncode, time.monotonic() - t0, rusage


def stop(*procs: subprocess.Popen, timeout: float = 10) -> None:
    """SIGTERM to each process's group, SIGKILL to those still there after TIMEOUT seconds;
    they are no longer killed at the exit."""
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    for p in procs:
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        untrack(p)


def start_hammer(argv: list[str], lines: int = 1, nice: int = 0,
                 stderr=subprocess.DEVNULL) -> tuple[subprocess.Popen, list[str]]:
    """Starts a hammer command that prints the addresses it bound on its first stdout lines
    (`serve` and `dark`: one; `dark --admin`: two): the process and those lines. Raises
    RuntimeError when they do not come within 30 s."""
    p = start(argv, nice=nice, stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL,
              text=True)
    got = [read_line(p, timeout=30) for _ in range(lines)]
    if not all(got):
        stop(p)
        raise RuntimeError(f"{' '.join(argv[:2])} did not start")
    return p, got


def read_line(p: subprocess.Popen, timeout: float = 10) -> str:
    """The next line of P's stdout (opened in text mode), or '' after TIMEOUT seconds."""
    line = []
    t = threading.Thread(target=lambda: line.append(p.stdout.readline().strip()), daemon=True)
    t.start()
    t.join(timeout)
    return line[0] if line else ""


# ---------------------------------------------------------------------------------------------
# Pinning and priority.


class Pinning:
    """taskset prefixes for the first and the last CPU this process may run on; empty lists
    when pinning is off, or impossible (one CPU, no taskset)."""

    def __init__(self, enabled: bool = True):
        self.cpus = sorted(os.sched_getaffinity(0))
        self.enabled = enabled and len(self.cpus) >= 2 and shutil.which("taskset") is not None
        self.first_cpu, self.last_cpu = self.cpus[0], self.cpus[-1]

    def first(self) -> list[str]:
        return ["taskset", "-c", str(self.first_cpu)] if self.enabled else []

    def last(self) -> list[str]:
        return ["taskset", "-c", str(self.last_cpu)] if self.enabled else []

    def describe(self, on_first: str, on_last: str) -> str:
        """E.g. 'nginx on CPU 0, generators on CPU 1 (taskset).' or 'No CPU pinning.'"""
        if not self.enabled:
            return "No CPU pinning."
        return f"{on_first} on CPU {self.first_cpu}, {on_last} on CPU {self.last_cpu} (taskset)."


def set_autogroup_nice(pid: int, nice: int) -> bool:
    """With scheduler autogroups on, every session is a group and `nice` only ranks threads
    inside one; /proc/PID/autogroup ranks the whole session against other tenants' sessions.
    Below 0 needs root. False when not possible."""
    try:
        with open(f"/proc/{pid}/autogroup", "w") as f:
            f.write(str(nice))
        return True
    except OSError:
        return False


def usable_nice(nice: int, who: str) -> int:
    """NICE, or 0 (with a note on stderr) when it is below 0 and this process is not root."""
    if nice < 0 and os.geteuid() != 0:
        print(f"{who}: not root, running at normal priority", file=sys.stderr)
        return 0
    return nice


# ---------------------------------------------------------------------------------------------
# CPU from /proc.


def proc_stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (field 3 first), or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of the whole process (all threads), 10 ms ticks. Raises if it is gone."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def _all_stats() -> dict[int, list[str]]:
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = proc_stat(int(entry))
            if fields is not None:
                out[int(entry)] = fields
    return out


def children_of(pid: int) -> list[int]:
    return [p for p, fields in _all_stats().items() if int(fields[1]) == pid]


def descends_from(pid: int, root: int, parent: dict[int, int]) -> bool:
    hops = 0
    while pid and pid != root and hops < 64:
        pid, hops = parent.get(pid, 0), hops + 1
    return pid == root


def tree_cpu_seconds(root: int) -> float:
    """CPU of ROOT and its descendants, live or reaped: utime+stime+cutime+cstime of every
    live process of the tree (a reaped child's CPU is in its parent's cutime/cstime)."""
    stats = _all_stats()
    parent = {p: int(fields[1]) for p, fields in stats.items()}
    ticks = sum(sum(int(x) for x in fields[11:15]) for p, fields in stats.items()
                if descends_from(p, root, parent))
    return ticks / CLK_TCK


def session_leaders_under(root: int) -> list[int]:
    """Processes under ROOT that lead a session of their own (setsid)."""
    stats = _all_stats()
    parent = {p: int(fields[1]) for p, fields in stats.items()}
    return [p for p, fields in stats.items()
            if int(fields[3]) == p and descends_from(p, root, parent)]


def cpu_jiffies() -> dict[int, tuple[int, int]]:
    """Per CPU: (busy, total) jiffies from /proc/stat (busy counts every tenant)."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            m = re.match(r"cpu(\d+) (.*)", line)
            if m:
                v = [int(x) for x in m.group(2).split()]
                idle = v[3] + v[4]  # idle + iowait
                total = sum(v[:8])  # guest time is already in user
                out[int(m.group(1))] = (total - idle, total)
    return out


def machine_busy() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs together from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v[:8]) - v[3] - v[4], sum(v[:8])


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


# ---------------------------------------------------------------------------------------------
# Servers on 127.0.0.1.


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(port: int, path: str = "/", timeout: float = 2) -> tuple[int, bytes]:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def https_get(port: int, ca: str, path: str = "/") -> tuple[bytes, str]:
    """GET `path` from 127.0.0.1:PORT over TLS, verified as localhost against `ca`: the body and
    the negotiated "PROTOCOL CIPHER"."""
    context = ssl.create_default_context(cafile=ca)
    with socket.create_connection(("127.0.0.1", port), timeout=2) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                      .encode())
            data = b""
            while chunk := s.recv(4096):
                data += chunk
            return data.split(b"\r\n\r\n", 1)[-1], f"{s.version()} {s.cipher()[0]}"


def answers_ok(port: int, ca: str | None = None, path: str = "/") -> str | None:
    """Whether 127.0.0.1:PORT answers PATH with `ok\\n` (over TLS, verified against CA, when CA
    is given): '' or the TLS "PROTOCOL CIPHER" when it does, None when not (yet)."""
    try:
        if ca:
            body, cipher = https_get(port, ca, path)
            return cipher if body == b"ok\n" else None
        status, body = http_get(port, path)
        return "" if (status, body) == (200, b"ok\n") else None
    except OSError:  # ssl.SSLError included
        return None


def openssl(*args, cwd):
    p = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        sys.exit(f"openssl {' '.join(args)} failed:\n{p.stderr}")


def make_certificates(tmp: str) -> tuple[str, str, str]:
    """A CA and a P-256 server certificate for localhost and 127.0.0.1 made with `openssl`:
    returns (ca.pem, server.pem, server.key) under tmp."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=hammer bench CA", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign", cwd=tmp)
    openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost",
            cwd=tmp)
    with open(os.path.join(tmp, "server.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                "extendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "server.ext",
            cwd=tmp)
    return tuple(os.path.join(tmp, n) for n in ("ca.pem", "server.pem", "server.key"))


# The start of every benchmark's nginx.conf, up to inside its http block (a str.format template
# over {dir}): one worker in the foreground, no access log, keep-alive that never ends a run's
# connections, temp paths under the run's directory. A benchmark appends its own http-level
# directives and servers, then closes the block with "}}".
NGINX_HTTP_HEAD = """\
worker_processes 1;
daemon off;
master_process on;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 120s;
  client_body_temp_path {dir}/tmp;
  proxy_temp_path {dir}/tmp;
  fastcgi_temp_path {dir}/tmp;
  uwsgi_temp_path {dir}/tmp;
  scgi_temp_path {dir}/tmp;
"""

# One server answering `200 ok` on every path: the target of the engine benchmarks.
NGINX_OK_CONF = NGINX_HTTP_HEAD + """\
  server {{
    listen 127.0.0.1:{port} backlog=4096;
    location / {{ return 200 "ok\\n"; }}
  }}
}}
"""


class Nginx:
    """nginx with one worker, started in DIRECTORY from TEMPLATE (a str.format template over
    {dir}, one {NAME} per entry of PORTS, and FMT), pinned by PIN, its autogroup at NICE.
    Ready once `answers_ok` on the PROBE port (over TLS verified against CA when CA is given)
    and its one worker exists; tried with new ports up to 5 times, then the benchmark exits
    with the error log. Attributes: port (the first of PORTS), ports (name → port), worker
    (the worker's pid), proc, dir, cipher ('' without TLS)."""

    def __init__(self, directory: str, template: str, *, pin: list[str] = (), ca: str = None,
                 ports=("port",), probe: str | None = None, nice: int = 0, **fmt):
        self.dir = directory
        self.ca = ca
        self.scheme = "https" if ca else "http"
        os.makedirs(os.path.join(directory, "tmp"), exist_ok=True)
        conf = os.path.join(directory, "nginx.conf")
        for _attempt in range(5):
            self.ports = {name: free_port() for name in ports}
            self.port = self.ports[ports[0]]
            with open(conf, "w") as f:
                f.write(template.format(dir=directory, **self.ports, **fmt))
            log = open(os.path.join(directory, "nginx.out"), "w")
            p = start([*pin, "nginx", "-p", directory, "-c", conf, "-e",
                       os.path.join(directory, "error.log")],
                      nice=nice, stdout=log, stderr=subprocess.STDOUT)
            deadline = time.time() + 10
            while time.time() < deadline and p.poll() is None:
                cipher = answers_ok(self.ports[probe or ports[0]], ca)
                workers = children_of(p.pid) if cipher is not None else []
                if len(workers) == 1:
                    self.proc, self.worker, self.cipher = p, workers[0], cipher
                    return
                time.sleep(0.1)
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait()
        with open(os.path.join(directory, "error.log")) as f:
            sys.exit(f"nginx in {directory} did not start:\n" + f.read())

    def errors(self) -> tuple[int, str]:
        """Lines of level error and above in error.log, and the first of them."""
        bad = []
        with open(os.path.join(self.dir, "error.log"), errors="replace") as f:
            for line in f:
                if re.search(r"\[(error|crit|alert|emerg)\]", line):
                    bad.append(line.strip())
        return len(bad), (bad[0] if bad else "")


def snapshot_hammer(path: str, build_dir: str, name: str, command: str) -> str:
    """Copies the hammer binary at `path` to BUILD_DIR/NAME and returns the copy's path.

    Others may rebuild the tree while a benchmark runs, and a relink in the middle of the rounds
    would mix two builds (or fail a run), so every benchmark measures a private copy. The copy
    must answer `COMMAND --help`; a binary being relinked is retried for up to a minute."""
    os.makedirs(build_dir, exist_ok=True)
    dest = os.path.join(build_dir, name)
    for _attempt in range(10):
        if os.path.exists(path):
            shutil.copy2(path, dest + ".tmp")
            os.replace(dest + ".tmp", dest)
            if subprocess.run([dest, command, "--help"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0:
                return dest
        time.sleep(6)  # probably being relinked right now
    sys.exit(f"no working hammer binary with '{command}' at {path}")


# ---------------------------------------------------------------------------------------------
# Generators compared by CPU per request: how to run each, and how to read its own report.


class Tool:
    """A generator: its command line, and PARSE(stdout, stderr, tmpdir) -> (ok, failed, seconds)
    reading the requests it says it completed."""

    def __init__(self, name, argv, parse, stdout_to_null=False, note=""):
        self.name = name
        self.argv = argv
        self.parse = parse
        self.stdout_to_null = stdout_to_null
        self.note = note


def installed(tools: list[Tool], only: str = "") -> list[Tool]:
    """The tools whose program exists (the others named on stderr), restricted to those whose
    name contains one of the comma-separated substrings of ONLY when given."""
    wanted = [t for t in tools if shutil.which(t.argv[0]) or os.path.exists(t.argv[0])]
    missing = [t.name for t in tools if t not in wanted]
    if missing:
        print(f"# skipped (not installed): {', '.join(missing)}", file=sys.stderr)
    if only:
        keep = [s.strip() for s in only.split(",")]
        wanted = [t for t in wanted if any(k in t.name for k in keep)]
    return wanted


def _int(pattern, text, default=None):
    m = re.search(pattern, text, re.M)
    if not m:
        if default is not None:
            return default
        raise ValueError(f"no match for {pattern!r} in:\n{text[-2000:]}")
    return int(m.group(1))


def _float(pattern, text):
    m = re.search(pattern, text, re.M)
    if not m:
        raise ValueError(f"no match for {pattern!r} in:\n{text[-2000:]}")
    return float(m.group(1))


def parse_wrk(out, err, _):
    m = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m),", out)
    if not m:
        raise ValueError("wrk: no 'requests in' line:\n" + out + err)
    total = int(m.group(1))
    secs = float(m.group(2)) * {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60}[m.group(3)]
    non2xx = _int(r"Non-2xx or 3xx responses:\s+(\d+)", out, 0)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    errors = sum(int(x) for x in sock.groups()) if sock else 0
    return total - non2xx, non2xx + errors, secs


def parse_ab(out, err, _):
    complete = _int(r"^Complete requests:\s+(\d+)", out)
    failed = _int(r"^Failed requests:\s+(\d+)", out)
    non2xx = _int(r"^Non-2xx responses:\s+(\d+)", out, 0)
    secs = _float(r"^Time taken for tests:\s+([\d.]+) seconds", out)
    return complete - failed - non2xx, failed + non2xx, secs


def parse_h2load(out, err, _):
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                  r"(\d+) failed, (\d+) errored, (\d+) timeout", out)
    if not m:
        raise ValueError("h2load: no requests line:\n" + out + err)
    secs = _float(r"finished in ([\d.]+)s", out)
    # h2load's own counts (its manual, OUTPUT): "succeeded" ended with a 2xx or 3xx, "failed"
    # includes the errored and timed-out ones. Its "status codes" also count answers whose
    # stream had not ended when a -D run stopped, so they are not used.
    return int(m.group(4)), int(m.group(5)), secs


def parse_hey(out, err, _):
    codes = [(int(c), int(n)) for c, n in re.findall(r"^\s*\[(\d+)\]\s+(\d+) responses", out, re.M)]
    if not codes:
        raise ValueError("hey: no status code distribution:\n" + out + err)
    ok = sum(n for c, n in codes if 200 <= c < 400)
    bad = sum(n for c, n in codes if not 200 <= c < 400)
    errs = sum(int(n) for n in re.findall(r"^\s*\[(\d+)\]\s+Get ", out, re.M))  # error lines
    secs = _float(r"^\s*Total:\s+([\d.]+) secs", out)
    return ok, bad + errs, secs


def parse_driver(out, err, _):
    """bench/curl_multi_driver.c and bench/curb_seed_driver.rb: 'completed=N failed=N
    seconds=S'."""
    m = re.findall(r"completed=(\d+) failed=(\d+) seconds=([\d.]+)", out + err)
    if not m:
        raise ValueError("driver: no summary line:\n" + (out + err)[-2000:])
    ok, failed, secs = m[-1]
    return int(ok), int(failed), float(secs)


HAMMER_JSON = "hammer.json"  # the --summary-json of hammer's rows, in the run's directory


def parse_hammer(out, err, tmp):
    with open(os.path.join(tmp, HAMMER_JSON)) as f:
        s = json.load(f)
    return int(s["succeeded"]), int(s["failed"]), float(s["seconds"])


def run_tool(tool: Tool, pin: list[str], tmp: str, timeout: float, server_pid: int) -> dict:
    """One measured run: the generator's user+sys CPU (wait4), the requests it reports, and the
    server worker's CPU over the run (/proc). Raises when it fails or completes nothing."""
    out_path, err_path = os.path.join(tmp, "out.txt"), os.path.join(tmp, "err.txt")
    hjson = os.path.join(tmp, HAMMER_JSON)
    if os.path.exists(hjson):
        os.unlink(hjson)
    with open(out_path, "w") as out, open(err_path, "w") as err:
        server_before = proc_cpu_seconds(server_pid)
        rc, wall, ru = run_measured(pin + tool.argv, timeout,
                                    stdout=subprocess.DEVNULL if tool.stdout_to_null else out,
                                    stderr=err, stdin=subprocess.DEVNULL)
        server_cpu = proc_cpu_seconds(server_pid) - server_before
    with open(out_path) as f:
        out_text = f.read()
    with open(err_path) as f:
        err_text = f.read()
    if rc != 0:
        raise RuntimeError(f"{tool.name} exited {rc}:\n{out_text[-1500:]}\n{err_text[-1500:]}")
    ok, failed, secs = tool.parse(out_text, err_text, tmp)
    if ok == 0:
        raise RuntimeError(f"{tool.name}: no successful request:\n{out_text[-1500:]}\n"
                           f"{err_text[-1500:]}")
    return {"tool": tool.name, "ok": ok, "failed": failed, "seconds": secs, "wall": wall,
            "user": ru.ru_utime, "sys": ru.ru_stime, "cpu": ru.ru_utime + ru.ru_stime,
            "nginx_cpu": server_cpu}


def run_rounds(tools: list[Tool], rounds: int, run: Callable[[Tool], dict], raw_path: str,
               name_width: int = 36) -> tuple[list[dict], dict[str, str]]:
    """Runs every tool once per round, the order rotated by one each round so that no tool
    always runs first or last. A tool that fails is dropped from the later rounds (one broken
    tool must not sink the others). Writes each run to RAW_PATH (TSV) as it ends. Returns the
    runs (each with its "round") and the dropped tools with their first error line."""
    runs, broken = [], {}
    with open(raw_path, "w") as raw:
        raw.write("round\ttool\tok\tfailed\tseconds\twall\tuser\tsys\tnginx_cpu\n")
        for rnd in range(rounds):
            k = rnd % len(tools)
            for t in tools[k:] + tools[:k]:
                if t.name in broken:
                    continue
                try:
                    r = run(t)
                except (RuntimeError, ValueError, OSError, KeyError) as e:
                    broken[t.name] = (str(e).strip().splitlines() or ["?"])[0][:200]
                    print(f"  {t.name}: FAILED, dropped: {e}", file=sys.stderr)
                    continue
                r["round"] = rnd
                runs.append(r)
                raw.write(f"{rnd}\t{t.name}\t{r['ok']}\t{r['failed']}\t{r['seconds']:.3f}\t"
                          f"{r['wall']:.3f}\t{r['user']:.4f}\t{r['sys']:.4f}\t"
                          f"{r['nginx_cpu']:.2f}\n")
                raw.flush()
                print(f"  round {rnd + 1}/{rounds} {t.name:<{name_width}} {r['ok']:>8} ok "
                      f"{r['failed']:>4} failed  {r['ok'] / r['seconds']:>9.0f} req/s  "
                      f"{1e6 * cpu_per_request(r):6.2f} us CPU/req", file=sys.stderr)
    return runs, broken


def parse_strace_counts(path: str) -> dict[str, int]:
    """`strace -c` output: calls per system call."""
    counts = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
                counts[parts[-1]] = int(parts[3])
    return counts


def syscall_profile(tools: list[Tool], pin, tmp, seconds, server_pid) -> list[str]:
    """`strace -f -c` over a short run of each tool: system calls per completed request, in
    total and for the six most frequent calls."""
    if not shutil.which("strace"):
        return ["(strace not installed)"]
    lines = []
    for t in tools:
        trace = os.path.join(tmp, "strace.txt")
        traced = Tool(t.name, ["strace", "-f", "-c", "-o", trace] + t.argv, t.parse,
                      t.stdout_to_null)
        try:
            r = run_tool(traced, pin, tmp, seconds + 60, server_pid)
        except Exception as e:  # noqa: BLE001 - report and continue
            lines.append(f"{t.name}: strace run failed: {e}")
            continue
        counts = parse_strace_counts(trace)
        n = max(r["ok"] + r["failed"], 1)
        top = sorted(counts.items(), key=lambda kv: -kv[1])[:6]
        lines.append(f"{t.name}: {sum(counts.values()) / n:.2f} syscalls/request over {n} "
                     "requests — " + ", ".join(f"{k} {v / n:.2f}" for k, v in top))
    return lines


def cpu_table(tools: list[Tool], runs: list[dict], refs: list[tuple[str, str]]) -> list[str]:
    """The markdown table of the generators: medians over rounds of req/s, CPU µs per request,
    user share, the server worker's µs per request, and for each (reference tool, heading) of
    REFS that ran, CPU per request ÷ the reference's formed within each round (median and
    range)."""
    refs = [(n, h) for n, h in refs if any(r["tool"] == n for r in runs)]
    head = (["tool", "req/s", "CPU µs/req", "user %", "nginx µs/req"] + [h for _, h in refs] +
            ["failed"])
    table = ["| " + " | ".join(head) + " |",
             "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for t in tools:
        mine = [r for r in runs if r["tool"] == t.name]
        if not mine:
            continue
        cells = [t.name, f"{median([r['ok'] / r['seconds'] for r in mine]):,.0f}",
                 f"{median([1e6 * cpu_per_request(r) for r in mine]):.2f}",
                 f"{100 * median([r['user'] / max(r['cpu'], 1e-9) for r in mine]):.0f}",
                 f"{median([1e6 * r['nginx_cpu'] / max(r['ok'], 1) for r in mine]):.1f}"]
        cells += [round_ratio(runs, "tool", t.name, ref) for ref, _ in refs]
        cells.append(str(sum(r["failed"] for r in mine)))
        table.append("| " + " | ".join(cells) + " |")
    return table


# ---------------------------------------------------------------------------------------------
# Figures.


def median(xs):
    xs = list(xs)
    return statistics.median(xs) if xs else float("nan")


def span(xs, spec: str = ".2f") -> str:
    """"median (min–max)" of XS (" to " between negative bounds), the median alone for one
    value, "–" for none."""
    xs = list(xs)
    if not xs:
        return "–"
    m = format(median(xs), spec)
    if len(xs) == 1:
        return m
    sep = " to " if min(xs) < 0 else "–"
    return f"{m} ({format(min(xs), spec)}{sep}{format(max(xs), spec)})"


def cpu_per_request(run: dict) -> float:
    """CPU seconds per answered request of one run (a dict with "cpu" and "ok")."""
    return run["cpu"] / max(run["ok"], 1)


def round_ratio(runs: list[dict], name_key: str, num: str, den: str,
                per: Callable[[dict], float] = cpu_per_request) -> str:
    """PER of NUM ÷ PER of DEN, formed within each round (the same machine state), as
    span(); "n/a" when no round ran both."""
    by_round = {}
    for r in runs:
        by_round.setdefault(r["round"], {})[r[name_key]] = r
    xs = [per(rs[num]) / per(rs[den]) for rs in by_round.values()
          if num in rs and den in rs and per(rs[den]) > 0]
    return span(xs) if xs else "n/a"


class RunInfo:
    """When a benchmark started and how loaded the host was, for its summary's last sentence."""

    def __init__(self):
        self.started = datetime.datetime.now().astimezone()
        self.t0 = time.monotonic()
        self.load_start = os.getloadavg()[0]

    def title_time(self) -> str:
        return f"{self.started:%Y-%m-%d %H:%M %Z}"

    def host(self, hammer_source: str = "") -> str:
        """'Host: MODEL, N CPUs, Linux X, load average A at start and B at end; run took T s.
        hammer: PATH.'"""
        text = (f"Host: {cpu_model()}, {os.cpu_count()} CPUs, Linux {platform.release()}, load "
                f"average {self.load_start:.1f} at start and {os.getloadavg()[0]:.1f} at end; "
                f"run took {time.monotonic() - self.t0:.0f} s.")
        return text + (f" hammer: {hammer_source}." if hammer_source else "")


def write_results(out_dir: str, name: str, summary: str, runs=None) -> None:
    """Writes OUT_DIR/summary.md (and OUT_DIR/runs.json when `runs` is given), copies the summary
    to $BENCH_SUMMARY_DIR/NAME.md for bench/run.sh when that is set, and prints it."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "summary.md"), "w") as f:
        f.write(summary)
    if runs is not None:
        with open(os.path.join(out_dir, "runs.json"), "w") as f:
            json.dump(runs, f, indent=1)
    summary_dir = os.environ.get("BENCH_SUMMARY_DIR")
    if summary_dir:
        os.makedirs(summary_dir, exist_ok=True)
        with open(os.path.join(summary_dir, name + ".md"), "w") as f:
            f.write(summary)
    print(summary)
