"""A real N-node OpenSearch 2.19 cluster on loopback, for integration tests and benchmarks.

The cluster is integrations/jvm/opensearch-cluster: one JVM, N embedded OpenSearch nodes with the
real Netty4 HTTP and transport layers, every port on 127.0.0.1. For scripts and benchmarks this
module builds it with Maven when the jar is missing or older than its sources (offline first);
the test fixture only uses the jar `make deps-test` built. It starts the cluster and drives it
through its stdin/stdout line protocol (see that folder's README.md).

    from opensearch import OpenSearchCluster
    with OpenSearchCluster() as cluster:          # 3 nodes, ~15-25 s to green
        cluster.http_addresses                    # ["127.0.0.1:40001", ...] node-1 first
        cluster.url(0)                            # "http://127.0.0.1:40001"
        cluster.stop_node("node-2")               # node.close(); the others keep serving
        cluster.start_node("node-2")              # same data, rejoins

A node that hangs for real needs a process of its own: a second harness JVM whose node joins the
cluster, which the test can SIGSTOP (every thread of that node stops; its sockets stay open):

    with OpenSearchCluster(nodes=1, join=cluster, settings={"node.roles": "data"}) as extra:
        extra.pause()                             # SIGSTOP the JVM: node-4 hangs
        extra.resume()                            # SIGCONT

In pytest, import the session fixture into the test module (conftest.py is shared and untouched):

    from opensearch import opensearch_cluster  # noqa: F401

The JVM is stopped by the fixture's teardown even when a test fails, by an atexit hook if the
interpreter exits first, and by itself when its stdin closes (so also when Python is killed).
Standard library only.
"""
import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

try:
    import pytest
except ImportError:  # usable from plain scripts and benchmarks too
    pytest = None

ROOT = Path(__file__).resolve().parents[2]
TOOL_DIR = ROOT / "integrations" / "jvm" / "opensearch-cluster"
JAR = TOOL_DIR / "target" / "opensearch-cluster.jar"
# OpenSearch 2.19 runs on Java 17; a newer JDK on the machine (Temurin 25) must not be picked up.
JDK17 = Path("/usr/lib/jvm/java-17-openjdk-amd64")

NODE_LINE = re.compile(r"^(node-\d+) http (\S+):(\d+) transport (\S+):(\d+) id (\S+)$")


def java_home():
    """$OPENSEARCH_JAVA_HOME, $HAMMER_JAVA17_HOME, the Debian JDK 17, $JAVA_HOME, else None."""
    for candidate in (os.environ.get("OPENSEARCH_JAVA_HOME"), os.environ.get("HAMMER_JAVA17_HOME"),
                      str(JDK17), os.environ.get("JAVA_HOME")):
        if candidate and (Path(candidate) / "bin" / "java").is_file():
            return candidate
    return None


def _java_env():
    env = dict(os.environ)
    home = java_home()
    if home:
        env["JAVA_HOME"] = home
        env["PATH"] = f"{home}/bin:{env.get('PATH', '')}"
    return env


def available():
    """True when java and mvn exist, which is all a build and a run need."""
    return (java_home() is not None or shutil.which("java") is not None) \
        and shutil.which("mvn") is not None


def is_built():
    """True when target/opensearch-cluster.jar (+ target/lib) is newer than its sources."""
    sources = [TOOL_DIR / "pom.xml", *TOOL_DIR.glob("src/**/*")]
    lib = TOOL_DIR / "target" / "lib"
    return JAR.is_file() and lib.is_dir() and all(
        JAR.stat().st_mtime >= s.stat().st_mtime for s in sources if s.is_file())


def build():
    """Builds target/opensearch-cluster.jar (+ target/lib) unless it is fresh (scripts and
    benchmarks; the tests use the jar `make deps-test` built and never build it)."""
    if is_built():
        return JAR
    env = _java_env()
    # Offline first (a warm ~/.m2 needs no network), then online (first build: ~50 MB).
    offline = subprocess.run(["mvn", "-q", "-B", "-o", "package"], cwd=TOOL_DIR, env=env,
                             capture_output=True, text=True)
    if offline.returncode != 0:
        online = subprocess.run(["mvn", "-q", "-B", "package"], cwd=TOOL_DIR, env=env,
                                capture_output=True, text=True)
        if online.returncode != 0:
            raise RuntimeError("building opensearch-cluster failed:\n"
                               + (online.stdout + online.stderr)[-4000:])
    return JAR


@dataclass
class Node:
    name: str
    host: str
    http_port: int
    transport_port: int
    id: str
    running: bool = True

    @property
    def http_address(self):
        return f"{self.host}:{self.http_port}"

    @property
    def url(self):
        return f"http://{self.host}:{self.http_port}"


class OpenSearchCluster:
    """One harness JVM with `nodes` OpenSearch nodes; see the module docstring."""

    def __init__(self, nodes=3, heap=None, processors=1, cluster_name="hammer-it",
                 settings=None, http_ports=None, transport_ports=None, ready_timeout=240,
                 join=None):
        self.node_count = nodes
        self.heap = heap or os.environ.get("OPENSEARCH_CLUSTER_HEAP", "2g")
        self.processors = processors
        self.cluster_name = join.cluster_name if join is not None else cluster_name
        self.settings = dict(settings or {})
        self.http_ports = http_ports
        self.transport_ports = transport_ports
        self.ready_timeout = ready_timeout
        self.join = join  # an OpenSearchCluster whose running nodes this JVM's nodes join
        self.data_dir = None
        self.nodes = {}  # name -> Node, in node order
        self.startup_seconds = None
        self._proc = None
        self._lines = []
        self._cond = threading.Condition()
        self._reader = None
        self._stderr = None

    # ---- lifecycle -------------------------------------------------------------------------

    def start(self, build_jar=True):
        """Starts the cluster, building the jar first when it is stale (unless build_jar is
        False: then a stale jar is an error)."""
        if build_jar:
            build()
        elif not is_built():
            raise RuntimeError(f"{JAR} is missing or stale: run scripts/jvm-deps.sh opensearch")
        self.data_dir = Path(tempfile.mkdtemp(prefix="hammer-opensearch-"))
        args = ["--data", str(self.data_dir), "--nodes", str(self.node_count),
                "--cluster-name", self.cluster_name, "--processors", str(self.processors),
                "--ready-timeout", str(self.ready_timeout)]
        if self.http_ports:
            args += ["--http-ports", ",".join(map(str, self.http_ports))]
        if self.transport_ports:
            args += ["--transport-ports", ",".join(map(str, self.transport_ports))]
        if self.join is not None:
            running = [n for n in self.join.nodes.values() if n.running]
            args += ["--join", ",".join(f"{n.host}:{n.transport_port}" for n in running),
                     "--first-node", str(len(self.join.nodes) + 1)]
        for key, value in self.settings.items():
            args += ["--setting", f"{key}={value}"]
        home = java_home()
        java = str(Path(home) / "bin" / "java") if home else "java"
        cmd = [java, "-Xms512m", f"-Xmx{self.heap}", "-XX:+ExitOnOutOfMemoryError",
               "-Dfile.encoding=UTF-8", "-Djava.locale.providers=SPI,COMPAT",
               "-Djava.net.preferIPv4Stack=true", "-jar", str(JAR), *args]
        self._stderr = open(self.data_dir / "harness.stderr", "w")
        began = time.monotonic()
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=self._stderr, text=True, bufsize=1,
                                      env=_java_env())
        _LIVE.add(self)
        self._reader = threading.Thread(target=self._read, name="opensearch-cluster-stdout",
                                        daemon=True)
        self._reader.start()
        try:
            self._wait(lambda line: line == "cluster ready", self.ready_timeout + 60, "cluster ready")
        except Exception:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - began
        return self

    def stop(self):
        """Closes every node and the JVM (stdin EOF, then SIGTERM, then SIGKILL); removes data."""
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                os.kill(proc.pid, signal.SIGCONT)  # a paused JVM cannot see its stdin close
            except OSError:
                pass
            try:
                proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(timeout=45)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if self._reader is not None:
            self._reader.join(timeout=5)
            self._reader = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        _LIVE.discard(self)
        if self.data_dir is not None and not os.environ.get("OPENSEARCH_KEEP_DATA"):
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self.data_dir = None
        for node in self.nodes.values():
            node.running = False

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # ---- nodes -----------------------------------------------------------------------------

    def pause(self):
        """SIGSTOP the harness JVM: every node in it hangs (threads stopped, sockets open)."""
        os.kill(self._proc.pid, signal.SIGSTOP)

    def resume(self):
        """SIGCONT the harness JVM after pause()."""
        os.kill(self._proc.pid, signal.SIGCONT)

    @property
    def http_addresses(self):
        """host:port of every node's HTTP, node-1 first (stopped nodes included)."""
        return [n.http_address for n in self.nodes.values()]

    @property
    def running_http_addresses(self):
        return [n.http_address for n in self.nodes.values() if n.running]

    def node(self, which):
        """A Node by index (0 = node-1) or by name ("node-1")."""
        if isinstance(which, int):
            return list(self.nodes.values())[which]
        return self.nodes[which]

    def url(self, which=0):
        """http://host:port of a node, by index (0 = node-1) or name."""
        return self.node(which).url

    def any_url(self):
        """The URL of the first node that is running."""
        return next(n.url for n in self.nodes.values() if n.running)

    def stop_node(self, name, timeout=90):
        """node.close() of one node; returns once the remaining nodes see it gone."""
        self._command(f"stop {name}", f"{name} stopped", timeout)
        self.nodes[name].running = False

    def start_node(self, name, timeout=180):
        """Starts a stopped node again on the same ports and data; returns once it has joined."""
        self._command(f"start {name}", f"{name} started", timeout)
        self.nodes[name].running = True

    # ---- HTTP (urllib) ---------------------------------------------------------------------

    def request(self, method, path, body=None, node=None, timeout=60):
        """(status, decoded JSON or text) from a node (default: the first running one).

        `body` may be a dict/list (sent as JSON) or a str/bytes (sent as is, e.g. NDJSON)."""
        base = self.url(node) if node is not None else self.any_url()
        data, headers = None, {}
        if body is not None:
            if isinstance(body, (dict, list)):
                data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
            else:
                data = body.encode() if isinstance(body, str) else body
                headers["Content-Type"] = ("application/x-ndjson" if "_bulk" in path
                                           else "application/json")
        req = urllib.request.Request(base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read()
        text = raw.decode("utf-8", "replace")
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def log_tail(self, lines=40):
        path = self.data_dir and self.data_dir / "logs" / f"{self.cluster_name}.log"
        if not path or not path.is_file():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    # ---- protocol --------------------------------------------------------------------------

    def _read(self):
        proc = self._proc
        for raw in proc.stdout:
            line = raw.rstrip("\n")
            with self._cond:
                self._lines.append(line)
                m = NODE_LINE.match(line)
                if m:
                    name = m.group(1)
                    self.nodes[name] = Node(name, m.group(2), int(m.group(3)), int(m.group(5)),
                                            m.group(6))
                self._cond.notify_all()
        with self._cond:
            self._lines.append(None)  # EOF
            self._cond.notify_all()

    def _command(self, command, done, timeout):
        if self._proc is None:
            raise RuntimeError("cluster is not running")
        with self._cond:
            start = len(self._lines)
        self._proc.stdin.write(command + "\n")
        self._proc.stdin.flush()
        self._wait(lambda line: line == done, timeout, done, start=start,
                   fail=lambda line: line.startswith(f"error {command}"))

    def _wait(self, ok, timeout, what, start=0, fail=lambda line: line.startswith("error ")):
        deadline = time.monotonic() + timeout
        seen = start
        with self._cond:
            while True:
                while seen < len(self._lines):
                    line = self._lines[seen]
                    seen += 1
                    if line is None:
                        raise RuntimeError(f"opensearch-cluster exited before '{what}'"
                                           + self._diagnostics())
                    if ok(line):
                        return line
                    if fail(line):
                        raise RuntimeError(f"opensearch-cluster: {line}" + self._diagnostics())
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no '{what}' from opensearch-cluster after {timeout}s"
                                       + self._diagnostics())
                self._cond.wait(left)

    def _diagnostics(self):
        out = "\n--- stdout:\n" + "\n".join(l for l in self._lines[-20:] if l is not None)
        err = self.data_dir and self.data_dir / "harness.stderr"
        if err and err.is_file():
            out += "\n--- stderr:\n" + err.read_text(errors="replace")[-3000:]
        return out + "\n--- log:\n" + self.log_tail()


_LIVE = set()


@atexit.register
def _stop_leftovers():
    for cluster in list(_LIVE):
        cluster.stop()


if pytest is not None:
    @pytest.fixture(scope="session")
    def opensearch_cluster():
        """A started 3-node cluster shared by the session. A test that stops a node must start
        it again (cluster.start_node) so that later tests see 3 nodes."""
        import prerequisites
        prerequisites.require_built(TOOL_DIR, JAR, "opensearch")
        cluster = OpenSearchCluster()
        try:
            cluster.start(build_jar=False)
            yield cluster
        finally:
            cluster.stop()
