"""Drive real Hadoop Streaming jobs from pytest.

`StreamingCluster` starts integrations/jvm/hadoop-streaming (a JVM running StreamJob through
ToolRunner) in local mode or on a MiniDFSCluster + MiniMRYarnCluster, once, and then runs jobs
in it: each job is one JSON request on the harness's stdin, answered by one JSON line (exit
code, job id, the job's counters read through Hadoop's counter API, the output files copied to
a local directory). Hadoop's logs go to `<work>/harness.log`.

The JVM is always the JDK 17 (never a newer JDK that happens to be on PATH); everything binds
to loopback. `require_harness()` fails the calling test at once when the jar is missing or older
than its sources (`make deps-test`, scripts/jvm-deps.sh hadoop, builds it).
"""
import json
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import prerequisites

ROOT = Path(__file__).resolve().parents[2]
HARNESS_DIR = ROOT / "integrations" / "jvm" / "hadoop-streaming"
HARNESS_JAR = HARNESS_DIR / "target" / "hadoop-streaming-it.jar"
RUN_SH = HARNESS_DIR / "run.sh"
JVM_DEPS = ROOT / "scripts" / "jvm-deps.sh"
JAVA17_HOME = prerequisites.JAVA17_HOME


LOOPBACK_BIND = HARNESS_DIR / "target" / "libloopback-bind.so"


def require_harness():
    """The harness jar and its loopback_bind library are built and fresh (the test run builds
    nothing)."""
    prerequisites.require_built(HARNESS_DIR, HARNESS_JAR, "hadoop")
    prerequisites.require(LOOPBACK_BIND.is_file(), f"{LOOPBACK_BIND} is missing",
                          "scripts/jvm-deps.sh hadoop")


def java17_available():
    return os.access(os.path.join(JAVA17_HOME, "bin", "java"), os.X_OK)


def build_harness():
    """For benchmarks: builds the harness if needed (scripts/jvm-deps.sh hadoop, which may fetch
    Maven artifacts). Tests call require_harness() instead."""
    if prerequisites.built(HARNESS_DIR, HARNESS_JAR) and LOOPBACK_BIND.is_file():
        return
    subprocess.run([str(JVM_DEPS), "hadoop"], check=True)
    if not (prerequisites.built(HARNESS_DIR, HARNESS_JAR) and LOOPBACK_BIND.is_file()):
        raise RuntimeError(f"{HARNESS_JAR} was not built by {JVM_DEPS}")


class JobResult:
    def __init__(self, reply, output_dir):
        self.reply = reply
        self.name = reply.get("name")
        self.rc = reply.get("rc")
        self.job_id = reply.get("job_id")
        self.seconds = reply.get("seconds")
        self.counters = reply.get("counters") or {}
        self.files = reply.get("files") or []
        self.output_dir = Path(output_dir)

    def counter_group(self, group):
        return dict(self.counters.get(group, {}))

    def task_counter(self, name):
        return self.counters.get("org.apache.hadoop.mapreduce.TaskCounter", {}).get(name)

    def part_files(self):
        return [self.output_dir / f for f in self.files if f.startswith("part-")]

    def part_lines(self):
        """Every line of every part file, in part-file order (LF-terminated lines)."""
        lines = []
        for path in self.part_files():
            lines.extend(path.read_text().splitlines())
        return lines

    def part_bytes(self):
        return b"".join(p.read_bytes() for p in self.part_files())


class StreamingCluster:
    """One harness JVM (mode "local" or "mini") that runs streaming jobs on request."""

    def __init__(self, mode, work, start_timeout=180):
        self.mode = mode
        self.work = Path(work)
        self.work.mkdir(parents=True, exist_ok=True)
        self.log_path = self.work / "harness.log"
        self._log = open(self.log_path, "wb")
        env = dict(os.environ)
        env["JAVA_HOME"] = JAVA17_HOME  # containers run $JAVA_HOME/bin/java
        env["HAMMER_JAVA17_HOME"] = JAVA17_HOME
        env.pop("HADOOP_HOME", None)
        env.pop("HADOOP_CONF_DIR", None)
        env.pop("JAVA_TOOL_OPTIONS", None)
        self.proc = subprocess.Popen(
            [str(RUN_SH), "--mode", mode, "--work", str(self.work)],
            cwd=self.work, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
            env=env, text=True, bufsize=1, start_new_session=True)
        self._lines = queue.Queue()
        self._reader = threading.Thread(target=self._read_stdout, daemon=True)
        self._reader.start()
        try:
            ready = self._next_reply(start_timeout)
        except Exception:
            self.close()
            raise
        if not ready.get("ready"):
            self.close()
            raise RuntimeError(f"streaming harness ({mode}) did not start: {ready}; "
                               f"see {self.log_path}:\n{self.log_tail()}")
        self.default_fs = ready.get("default_fs")
        self.start_seconds = ready.get("seconds")

    def _read_stdout(self):
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _next_reply(self, timeout):
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"streaming harness ({self.mode}) gave no answer in "
                                   f"{timeout}s; log tail:\n{self.log_tail()}")
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                raise RuntimeError(f"streaming harness ({self.mode}) exited "
                                   f"(rc={self.proc.poll()}); log tail:\n{self.log_tail()}")
            line = line.strip()
            if line.startswith("{"):
                return json.loads(line)

    def log_tail(self, lines=60):
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def run(self, name, inputs, args, timeout=300):
        """Run one streaming job; `args` are StreamJob's arguments without -input/-output
        (generic -D options first). Returns a JobResult; its part files are in work/out/name."""
        output_dir = self.work / "out" / name
        request = {"name": name, "inputs": [str(Path(p).resolve()) for p in inputs],
                   "output": str(output_dir), "args": [str(a) for a in args]}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        reply = self._next_reply(timeout)
        if reply.get("name") != name:
            raise RuntimeError(f"unexpected harness reply {reply}")
        return JobResult(reply, output_dir)

    def close(self, timeout=60):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"quit": True}) + "\n")
                self.proc.stdin.flush()
                self.proc.stdin.close()
            except (BrokenPipeError, OSError, ValueError):
                pass
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                # The JVM and any task process it started share its session.
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def remove_tree(path):
    shutil.rmtree(path, ignore_errors=True)
