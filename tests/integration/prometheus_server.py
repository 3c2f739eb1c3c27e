"""A real Prometheus server (Debian's `prometheus`) for the tests: on a free loopback port, its
storage in a temporary directory, queried through its HTTP API."""
import json
import signal
import subprocess
import urllib.error
import urllib.parse
import urllib.request

from harness import free_port, wait_for
from prerequisites import require_program


class Prometheus:
    """Prometheus with the configuration `config` (YAML text) written in `tmp_path`; `extra`
    are more command-line flags (e.g. --web.enable-remote-write-receiver)."""

    def __init__(self, config, tmp_path, *extra):
        require_program("prometheus", "prometheus")
        config_path = tmp_path / "prometheus.yml"
        config_path.write_text(config)
        self.port = free_port()
        self.log_path = tmp_path / "prometheus.log"
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            ["prometheus", f"--config.file={config_path}",
             f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{self.port}", *extra],
            stdout=self.log, stderr=subprocess.STDOUT)
        wait_for(self._ready, timeout=30, what="prometheus ready")

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def _ready(self):
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=1) as r:
                return r.status == 200
        except OSError:
            return False

    def api(self, path, **params):
        """The `data` of a successful API answer (the test fails on any other)."""
        url = f"{self.url}/api/v1/{path}?" + urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                body = json.loads(r.read())
        except urllib.error.HTTPError as e:
            raise AssertionError(f"{path} {params}: HTTP {e.code} {e.read()!r}") from None
        assert body["status"] == "success", body
        return body["data"]

    def query(self, promql, **params):
        """The instant vector of `promql` as [(labels, value)]."""
        data = self.api("query", query=promql, **params)
        return [(item["metric"], float(item["value"][1])) for item in data["result"]]

    def scalar(self, promql, **params):
        """The single value of `promql`, or None while it has none."""
        result = self.query(promql, **params)
        assert len(result) <= 1, result
        return result[0][1] if result else None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
