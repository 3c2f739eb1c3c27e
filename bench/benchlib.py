"""Helpers shared by the benchmarks in bench/ (standard library only)."""
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import time


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


def write_results(out_dir: str, name: str, summary: str, runs=None) -> None:
    """Writes OUT_DIR/summary.md (and OUT_DIR/runs.json when `runs` is given), copies the summary
    to $BENCH_SUMMARY_DIR/NAME.md for bench/run.sh when that is set, and prints it."""
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
