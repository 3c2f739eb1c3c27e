"""`hammer dark` for the integration tests: the proxy on an ephemeral port with its admin
listener, its Prometheus metrics, and `hammer load` driving requests through it.

Dark copies are never awaited by the proxy, so a test must not read dark-side counters the
moment `hammer load` exits: DarkProxy.settled_metrics() polls /metrics until every copy sent has
an outcome (sent = succeeded + failed, and no copy in flight when the proxy exports
hammer_dark_copies_in_flight).
"""
import http.client
import json
import re
import signal
import subprocess
import tempfile
import threading
import time
import urllib.request

from harness import HAMMER, rss_kib, run_hammer

_CLUSTER = re.compile(r'cluster="((?:[^"\\]|\\.)*)"')  # the value as written, escapes kept


class DarkProxy:
    """`hammer dark` on an ephemeral loopback port, with its admin listener unless admin=False.
    Raises if it does not start (and leaves no process behind). stdout carries only the two
    addresses; stderr goes to a file (a pipe nobody reads could fill up and block the proxy),
    and both are kept in .stdout/.stderr once stop() returned. `wrapper` runs it under another
    command that execs it (e.g. prlimit), so the process id stays hammer's."""

    def __init__(self, *args, admin=True, hammer=None, env=None, wrapper=()):
        command = [*wrapper, hammer or HAMMER, "dark", "--listen", "127.0.0.1:0"]
        if admin:
            command += ["--admin", "127.0.0.1:0"]
        self._stderr = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(command + list(args), stdout=subprocess.PIPE,
                                     stderr=self._stderr, text=True, env=env)
        self.stdout = self.stderr = ""
        self.address = self.proc.stdout.readline().strip()
        self.admin = self.proc.stdout.readline().strip() if admin else ""
        if not self.address or (admin and not self.admin):
            self.stop()
            raise RuntimeError("hammer dark did not start: " + self.stderr)
        self.host, port = self.address.rsplit(":", 1)
        self.port = int(port)

    def url(self, path="/"):
        return f"http://{self.address}{path}"

    def get_admin(self, path, headers=None):
        request = urllib.request.Request(f"http://{self.admin}{path}", headers=headers or {})
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.read().decode()

    def metrics(self, headers=None):
        values = {}
        for line in self.get_admin("/metrics", headers).splitlines():
            if line.startswith("#") or not line.strip():
                continue
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
        return values

    def wait_for_metric(self, name, predicate, timeout=10.0):
        """Polls /metrics until predicate(value) holds; returns the value or raises."""
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            value = self.metrics().get(name)
            if value is not None and predicate(value):
                return value
            time.sleep(0.02)
        raise AssertionError(f"{name} is {value} after {timeout}s")

    def settled_metrics(self, timeout=30.0):
        """/metrics once every dark copy sent has ended (succeeded or failed by type) and none
        is in flight;
polled, the deadline is only a safety net."""
        deadline = time.monotonic() + timeout
        while True:
            m = self.metrics()
            unsettled = copies_unsettled(m)
            if not unsettled:
                return m
            if time.monotonic() > deadline:
                raise AssertionError(f"dark copies still unsettled after {timeout}s: {unsettled}")
            time.sleep(0.02)

    def rss_kib(self):
        return rss_kib(self.proc.pid)

    def stop(self):
        """SIGTERM (SIGKILL after 20 s); returns the exit status. Idempotent."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            out, _ = self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        self.stdout += out or ""
        self._stderr.seek(0)
        self.stderr = self._stderr.read()
        return self.proc.returncode


def copies_unsettled(metrics):
    """{cluster: why} for every dark cluster whose copies have not all ended."""
    clusters = {m.group(1) for name in metrics for m in [_CLUSTER.search(name)]
                if m and name.startswith("hammer_dark_sent_total")}
    unsettled = {}
    for cluster in clusters:
        label = f'cluster="{cluster}"'
        sent = metrics[f"hammer_dark_sent_total{{{label}}}"]
        succeeded = metrics[f"hammer_dark_succeeded_total{{{label}}}"]
        failed = sum(v for name, v in metrics.items()
                     if name.startswith(f"hammer_dark_failed_total{{{label},"))
        in_flight = metrics.get(f"hammer_dark_copies_in_flight{{{label}}}", 0)
        if in_flight or sent != succeeded + failed:
            unsettled[cluster] = dict(sent=sent, succeeded=succeeded, failed=failed,
                                      in_flight=in_flight)
    return unsettled


def report_endpoint(proxy, endpoint_name, n, timeout=60.0):
    """The comparison report's row for `endpoint_name` once n of its requests are recorded
    (compared, or counted incomplete), or as it stands at the deadline, a safety net: each
    answer is polled for, never waited a fixed time."""
    deadline = time.monotonic() + timeout
    while True:
        report = json.loads(proxy.get_admin("/hammer/dark/report"))
        endpoint = next((e for e in report["endpoints"] if e["endpoint"] == endpoint_name),
                        {"total": 0, "incomplete": 0})
        if endpoint["total"] + endpoint["incomplete"] >= n or time.monotonic() > deadline:
            return endpoint
        time.sleep(0.05)


def drive(url, n, concurrency=20, method=""):
    """Sends n requests to url with `hammer load`; returns its JSON summary."""
    line = (method + " " if method else "") + url + "\n"
    r = run_hammer(["load", "-", "-c", str(concurrency), "--emit", "none", "-q",
                    "--summary-json", "/dev/stdout"], input_text=line * n)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def dark_received(*instances):
    """Requests carrying X-Hammer-Dark that `hammer serve` instances received."""
    return sum(s.stats()["by_header"]["X-Hammer-Dark"] for s in instances)


class InFlight:
    """`count` clients, each sending one GET through the proxy on its own connection."""

    def __init__(self, proxy, path, count):
        self.results = [None] * count
        self.threads = [threading.Thread(target=self._one, args=(proxy, path, i), daemon=True)
                        for i in range(count)]
        for t in self.threads:
            t.start()

    def _one(self, proxy, path, i):
        connection = http.client.HTTPConnection(proxy.host, proxy.port, timeout=30)
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            self.results[i] = (response.status, response.getheader("Connection"),
                               response.read())
        except (OSError, http.client.HTTPException) as e:
            self.results[i] = ("error", type(e).__name__, b"")
        finally:
            connection.close()

    def join(self):
        for t in self.threads:
            t.join(timeout=60)
        return self.results
