"""A real standalone ZooKeeper (Debian's zookeeper 3.8) on loopback, for integration tests.

The server is the Debian jar run in the foreground (`ZooKeeperServerMain zoo.cfg`) on a free
127.0.0.1 port with its own data directory, the AdminServer off and only `ruok` and `srvr`
enabled; it is ready when `srvr` shows its mode. It can be killed and restarted on the same
port, with the same data (sessions survive a quick restart) or a fresh data dir.

    from zookeeper import ZooKeeperServer
    with ZooKeeperServer() as zk:               # ~1.5 s until it serves
        zk.hosts                                # "127.0.0.1:40123"
        zk.url("/hammer")                       # "zk://127.0.0.1:40123/hammer"
        zk.create("/hammer/config", '{"regular": "web", "dark": {"web-dark": {}}}')
        zk.set("/hammer/config", "...")
        zk.children("/hammer/clusters/web-dark/members")   # sorted names
        zk.get("/hammer/config")                # str
        zk.delete("/hammer", recursive=True)
        zk.kill(); zk.start()                   # ZooKeeper down, then back on the same port
        zk.wait_until(lambda: len(zk.children(p)) == 2, timeout=5)

In pytest, import a fixture into the test module (conftest.py is shared and untouched):
`zookeeper_server` is one ZooKeeper for the session, `zk` one for the test.

    from zookeeper import zookeeper_server  # noqa: F401
    from zookeeper import zk  # noqa: F401

The znode layout hammer uses is in docs/dark-znodes.md.

Client side: the `kazoo` package when it is importable (Debian python3-kazoo, PyPI kazoo);
otherwise Debian's zkCli.sh, one JVM per call (slower, about a second each). Short session
timeouts for expiry tests: ZooKeeperServer(tick_ms=100) allows sessions from 200 ms.

The JVM is killed by stop()/kill(), by the fixture's teardown, by an atexit hook, and (Linux)
by the kernel when this interpreter dies (PR_SET_PDEATHSIG).
"""
import atexit
import ctypes
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

try:
    import pytest
except ImportError:  # usable from plain scripts too
    pytest = None

try:
    from kazoo.client import KazooClient
    from kazoo.exceptions import NoNodeError
except ImportError:
    KazooClient = None

JAR = Path("/usr/share/java/zookeeper.jar")
CONF_DIR = Path("/etc/zookeeper/conf")  # log4j settings only
ZKCLI = Path("/usr/share/zookeeper/bin/zkCli.sh")

_running = set()


def available():
    """True when java and the Debian zookeeper jar are installed."""
    return shutil.which("java") is not None and JAR.is_file()


def require():
    """Fails the calling test at once unless ZooKeeper can run here."""
    import prerequisites
    prerequisites.require(available(), f"needs java and Debian's zookeeper package ({JAR})",
                          "make deps-test (scripts/deps.sh test)")


from harness import free_port  # noqa: E402  (reserved ports, harness.py)


try:
    _prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl  # resolved before any fork
except (OSError, AttributeError):
    _prctl = None


def _die_with_parent():
    # Runs in the child between fork and exec: SIGKILL when the Python process goes away.
    if _prctl is not None:
        _prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class ZooKeeperServer:
    """One standalone ZooKeeper on 127.0.0.1:port, data under workdir/data (or another name)."""

    def __init__(self, port=None, workdir=None, tick_ms=100, min_session_ms=None,
                 max_session_ms=60000):
        self.port = port or free_port()
        self._own_dir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="hammer-zk-"))
        self.tick_ms = tick_ms
        self.min_session_ms = min_session_ms or 2 * tick_ms
        self.max_session_ms = max_session_ms
        self.data_name = "data"
        self.proc = None
        self._client = None

    @property
    def hosts(self):
        return f"127.0.0.1:{self.port}"

    def url(self, path="/hammer"):
        return f"zk://{self.hosts}{path}"

    @property
    def running(self):
        return self.proc is not None and self.proc.poll() is None

    # -- server lifecycle ---------------------------------------------------------------------

    def start(self, fresh_data=False, timeout=30):
        """Starts the server (same port; same data unless fresh_data) and waits for imok."""
        if self.running:
            return self
        if fresh_data:
            self.data_name = f"data-{int(time.time() * 1000)}"
        data = self.workdir / self.data_name
        data.mkdir(parents=True, exist_ok=True)
        config = self.workdir / "zoo.cfg"
        config.write_text("\n".join([
            f"tickTime={self.tick_ms}",
            f"dataDir={data}",
            f"clientPort={self.port}",
            "clientPortAddress=127.0.0.1",
            f"minSessionTimeout={self.min_session_ms}",
            f"maxSessionTimeout={self.max_session_ms}",
            "admin.enableServer=false",
            "4lw.commands.whitelist=ruok,srvr",
            "forceSync=no",
            "",
        ]))
        log = open(self.workdir / "zookeeper.log", "ab")
        self.proc = subprocess.Popen(
            ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m",
             "-Dzookeeper.admin.enableServer=false", "-cp", f"{CONF_DIR}:{JAR}",
             "org.apache.zookeeper.server.ZooKeeperServerMain", str(config)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent)
        log.close()
        _running.add(self)
        deadline = time.monotonic() + timeout
        while not self.serving():
            if self.proc.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited with {self.proc.returncode}:\n"
                                   + self.log_tail())
            if time.monotonic() > deadline:
                self.kill()
                raise TimeoutError(f"ZooKeeper not ready after {timeout}s:\n" + self.log_tail())
            time.sleep(0.05)
        return self

    def kill(self):
        """SIGKILL: what a crash looks like to clients (connections reset at once)."""
        self._close_client()
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc = None
        _running.discard(self)

    def restart(self, fresh_data=False):
        self.kill()
        return self.start(fresh_data=fresh_data)

    def stop(self):
        """Kills the server and removes its directory if this object made it."""
        self.kill()
        if self._own_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def serving(self):
        """True once sessions are served. (`ruok` answers imok earlier, while connections are
        still closed with "ZooKeeperServer not running"; `srvr` shows the mode only then.)"""
        return "Mode: " in self.four_letter_word("srvr")

    def four_letter_word(self, word):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(word.encode())
                chunks = []
                while chunk := s.recv(4096):
                    chunks.append(chunk)
                return b"".join(chunks).decode(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines=30):
        try:
            text = (self.workdir / "zookeeper.log").read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    # -- znodes -------------------------------------------------------------------------------

    def create(self, path, data="", ephemeral=False, sequence=False):
        """Creates path (and missing parents); returns the created path. Ephemeral znodes
        belong to this helper's session (zkCli: to a session that ends with the call)."""
        if KazooClient is not None:
            return self._kazoo().create(path, _bytes(data), ephemeral=ephemeral,
                                        sequence=sequence, makepath=True)
        parent = path.rsplit("/", 1)[0]
        if parent:
            self._ensure_path_cli(parent)
        flags = (["-e"] if ephemeral else []) + (["-s"] if sequence else [])
        _, _, err = self._cli("create", *flags, path, data)
        match = re.search(r"^Created (\S+)$", err, re.M)
        if not match:
            raise RuntimeError(f"zkCli create {path}: {err.strip().splitlines()[-1:]}")
        return match.group(1)

    def set(self, path, data):
        if KazooClient is not None:
            self._kazoo().set(path, _bytes(data))
        else:
            self._cli("set", path, data)

    def get(self, path):
        """The data as str, or None when the znode does not exist."""
        if KazooClient is not None:
            try:
                return self._kazoo().get(path)[0].decode()
            except NoNodeError:
                return None
        rc, out, _ = self._cli("get", path)
        return None if rc != 0 else out[:-1] if out.endswith("\n") else out

    def exists(self, path):
        if KazooClient is not None:
            return self._kazoo().exists(path) is not None
        return self._cli("stat", path)[0] == 0

    def children(self, path):
        """Sorted child names; [] when the znode does not exist."""
        if KazooClient is not None:
            try:
                return sorted(self._kazoo().get_children(path))
            except NoNodeError:
                return []
        rc, out, _ = self._cli("ls", path)
        match = re.search(r"^\[(.*)\]$", out, re.M)
        if rc != 0 or not match:
            return []
        return sorted(c.strip() for c in match.group(1).split(",") if c.strip())

    def delete(self, path, recursive=False):
        if KazooClient is not None:
            try:
                self._kazoo().delete(path, recursive=recursive)
            except NoNodeError:
                pass
        else:
            self._cli("deleteall" if recursive else "delete", path)

    def wait_until(self, predicate, timeout=5.0, interval=0.02):
        """Polls predicate() until true; raises TimeoutError after timeout seconds."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise TimeoutError(f"condition not met within {timeout}s")
            time.sleep(interval)

    def _kazoo(self):
        if self._client is None:
            self._client = KazooClient(hosts=self.hosts, timeout=10)
            self._client.start(timeout=10)
        return self._client

    def _close_client(self):
        if self._client is not None:
            try:
                self._client.stop()
                self._client.close()
            except Exception:  # noqa: BLE001 - the server may already be gone
                pass
            self._client = None

    def _ensure_path_cli(self, path):
        prefix = ""
        for part in path.strip("/").split("/"):
            prefix += "/" + part
            self._cli("create", prefix, "")

    def _cli(self, *args):
        """(exit code, what the command printed after connecting, stderr). zkCli prints its
        results to stdout after the connection event, and Created/errors to stderr."""
        env = dict(os.environ, CLIENT_JVMFLAGS="-Dzookeeper.jmx.log4j.disable=true")
        proc = subprocess.run(["bash", str(ZKCLI), "-server", self.hosts, *args],
                              capture_output=True, text=True, timeout=60, env=env)
        marker = "WatchedEvent state:SyncConnected type:None path:null\n"
        out = proc.stdout.split(marker, 1)[1] if marker in proc.stdout else ""
        return proc.returncode, out, proc.stderr


def _bytes(data):
    return data if isinstance(data, bytes) else str(data).encode()


@atexit.register
def _stop_leftovers():
    for server in list(_running):
        server.kill()


def _started():
    """A started ZooKeeper, stopped when the generator is closed (a fixture's teardown)."""
    require()
    server = ZooKeeperServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()


if pytest is not None:
    @pytest.fixture(scope="session")
    def zookeeper_server():
        """A started ZooKeeper shared by the session (tickTime 100 ms). A test that kills it
        must start it again (zk.start()) so that later tests find it running."""
        yield from _started()

    @pytest.fixture
    def zk():
        """A started ZooKeeper of the test's own, which it may kill and restart."""
        yield from _started()
