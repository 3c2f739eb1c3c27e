"""Toxiproxy (https://github.com/Shopify/toxiproxy, v2.5.0), a TCP proxy that injects network
faults on cue, driven through its HTTP API, for the fault-injection tests.

`scripts/go-deps.sh` installs its server as ~/go/bin/server (the name the module's cmd/server
package gives it). Toxiproxy here listens only on loopback: its API on a port reserved with
harness.free_port(), each proxy on another, upstreams on 127.0.0.1.

    with Toxiproxy() as toxi:
        proxy = toxi.proxy("serve", serve.port)      # 127.0.0.1:proxy.port -> serve
        proxy.toxic("latency", latency=100, jitter=20)
        ...
        proxy.clear()                                # every toxic removed

Toxics (the API's names and attributes, times in milliseconds unless said): latency
{latency, jitter}; bandwidth {rate: KB/s}; timeout {timeout: stop all data, close after it;
0 = never close}; reset_peer {timeout: after the first data, wait, then close with SO_LINGER 0,
a TCP RST}; slicer {average_size, size_variation (bytes), delay (microseconds)}; limit_data
{bytes: close the connection once this many have passed}. A toxic applies to one direction:
stream "downstream" (server to client, the default) or "upstream" (client to server), and to
connections already open as well as new ones.

Standard library only.
"""
import json
import os
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from harness import free_port

GO_DEPS = "scripts/go-deps.sh"


def server_binary():
    """The toxiproxy server: ~/go/bin/server, where scripts/go-deps.sh installs it. Fails the
    calling test, naming that script, when it is missing."""
    from prerequisites import require
    found = str(Path.home() / "go" / "bin" / "server")
    require(os.access(found, os.X_OK), "toxiproxy (~/go/bin/server) is not installed", GO_DEPS)
    return found


class ToxiproxyError(RuntimeError):
    pass


class Toxiproxy:
    """A toxiproxy server on 127.0.0.1, its API on a reserved port. stop() ends it (SIGTERM,
    then SIGKILL) and is idempotent; the constructor raises, leaving no process, if it does not
    answer within `timeout` seconds."""

    def __init__(self, timeout=10.0):
        self.api_port = free_port()
        self.api = f"http://127.0.0.1:{self.api_port}"
        self._log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([server_binary(), "-host", "127.0.0.1",
                                      "-port", str(self.api_port)],
                                     stdout=self._log, stderr=subprocess.STDOUT, text=True)
        self.log = ""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.request("GET", "/version")
                break
            except (OSError, ToxiproxyError):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise ToxiproxyError("toxiproxy did not start: " + self.log)
                time.sleep(0.02)

    def request(self, method, path, body=None):
        """The API's answer to METHOD path (JSON body), decoded; raises ToxiproxyError on a
        status other than 2xx."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.api + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as reply:
                text = reply.read().decode()
        except urllib.error.HTTPError as e:
            raise ToxiproxyError(f"{method} {path}: {e.code} {e.read().decode()}") from None
        return json.loads(text) if text.strip().startswith(("{", "[")) else text

    def proxy(self, name, upstream_port, upstream_host="127.0.0.1", listen_port=None):
        """A new proxy: 127.0.0.1:listen_port (reserved with free_port() unless given) to
        upstream_host:upstream_port."""
        port = listen_port or free_port()
        self.request("POST", "/proxies", {"name": name, "listen": f"127.0.0.1:{port}",
                                          "upstream": f"{upstream_host}:{upstream_port}",
                                          "enabled": True})
        return Proxy(self, name, port)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self._log.closed:
            self._log.seek(0)
            self.log = self._log.read()
            self._log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Proxy:
    """One toxiproxy proxy: 127.0.0.1:port, its toxics added and removed through the API."""

    def __init__(self, server, name, port):
        self.server = server
        self.name = name
        self.port = port
        self.address = f"127.0.0.1:{port}"

    def url(self, path="/", scheme="http"):
        return f"{scheme}://{self.address}{path}"

    def toxic(self, kind, stream="downstream", toxicity=1.0, name=None, **attributes):
        """Adds a toxic of type `kind` (attributes as the API names them); returns its name."""
        name = name or f"{kind}_{stream}"
        self.server.request("POST", f"/proxies/{self.name}/toxics",
                            {"name": name, "type": kind, "stream": stream,
                             "toxicity": toxicity, "attributes": attributes})
        return name

    def remove(self, toxic_name):
        self.server.request("DELETE", f"/proxies/{self.name}/toxics/{toxic_name}")

    def toxics(self):
        return self.server.request("GET", f"/proxies/{self.name}/toxics")

    def clear(self):
        """Removes every toxic of this proxy."""
        for toxic in self.toxics():
            self.remove(toxic["name"])

    def delete(self):
        self.server.request("DELETE", f"/proxies/{self.name}")

