"""`hammer dark` as a process for the integration tests: start it on an ephemeral loopback
port (with its admin listener unless told otherwise), read its addresses, scrape /metrics,
stop it and keep what it printed."""
import subprocess
import time
import urllib.request

from harness import HAMMER


class DarkProxy:
    """`hammer dark` on an ephemeral port, with its admin listener."""

    def __init__(self, *args, admin=True, hammer=None, env=None):
        command = [hammer or HAMMER, "dark", "--listen", "127.0.0.1:0"]
        if admin:
            command += ["--admin", "127.0.0.1:0"]
        self.proc = subprocess.Popen(command + list(args), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)
        self.address = self.proc.stdout.readline().strip()
        self.admin = self.proc.stdout.readline().strip() if admin else ""
        if not self.address or (admin and not self.admin):
            raise RuntimeError("hammer dark did not start: " + self.proc.stderr.read())
        self.host, port = self.address.rsplit(":", 1)
        self.port = int(port)
        self.stdout = self.stderr = ""

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

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            out, err = self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        self.stdout += out or ""
        self.stderr += err or ""
        return self.proc.returncode
