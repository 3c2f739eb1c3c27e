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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HAMMER = os.environ.get("HAMMER", str(ROOT / "build" / "release" / "hammer"))
ARTIFACTS = ROOT / "tests" / "integration" / ".artifacts"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


def run_hammer(args, input_text=None, timeout=120, env=None):
    proc = subprocess.run([HAMMER] + list(args), input=input_text, capture_output=True,
                          text=True, timeout=timeout, env=env, errors="replace")
    return Result(proc)


class HammerServe:
    """`hammer serve` on an ephemeral loopback port."""

    def __init__(self, *extra):
        self.proc = subprocess.Popen([HAMMER, "serve", "--listen", "127.0.0.1:0", *extra],
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


def closed_port():
    """A loopback port with nothing listening (bound then released)."""
    return free_port()
