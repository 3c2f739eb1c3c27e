"""A throw-away PKI for the TLS tests, made with the `openssl` command line.

`make_pki(directory)` writes a CA (ca.pem) and leaf certificates signed by it:
  server.pem/server.key    for DNS:localhost and IP:127.0.0.1 (the one nginx should serve)
  other.pem/other.key      for DNS:other.test only (a name that never matches a loopback URL)
  client.pem/client.key    a client certificate (CN=hammer-client, clientAuth) for mutual TLS
  expired.pem/expired.key  for DNS:localhost and IP:127.0.0.1, expired (its notAfter is a day
                           before its notBefore, which is now)
`issue_leaf(pki, name, ...)` signs one more (each gets a new serial number), e.g. the
certificate a reload test swaps in. Keys are P-256; the others are valid for two days. Nothing
is installed in the system store, so without --cacert the CA is unknown to hammer.
"""
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    other_cert: Path
    other_key: Path
    client_cert: Path
    client_key: Path
    expired_cert: Path
    expired_key: Path
    directory: Path


def _openssl(*args, cwd):
    proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed:\n{proc.stderr}")


def _leaf(directory, name, subject_cn, san, usage="serverAuth", days=2):
    key, csr, cert = f"{name}.key", f"{name}.csr", f"{name}.pem"
    ext = directory / f"{name}.ext"
    ext.write_text(f"subjectAltName={san}\n"
                   "basicConstraints=critical,CA:FALSE\n"
                   "keyUsage=critical,digitalSignature\n"
                   f"extendedKeyUsage={usage}\n")
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", key, "-out", csr, "-subj", f"/CN={subject_cn}", cwd=directory)
    _openssl("x509", "-req", "-in", csr, "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", cert, "-days", str(days), "-sha256", "-extfile", ext.name,
             cwd=directory)
    return directory / cert, directory / key


def make_pki(directory):
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-sha256",
             "-subj", "/CN=hammer integration test CA",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=directory)
    server_cert, server_key = _leaf(directory, "server", "localhost",
                                    "DNS:localhost,IP:127.0.0.1")
    other_cert, other_key = _leaf(directory, "other", "other.test", "DNS:other.test")
    client_cert, client_key = _leaf(directory, "client", "hammer-client", "DNS:hammer-client",
                                    usage="clientAuth")
    expired_cert, expired_key = _leaf(directory, "expired", "localhost",
                                      "DNS:localhost,IP:127.0.0.1", days=-1)
    return Pki(ca=directory / "ca.pem", server_cert=server_cert, server_key=server_key,
               other_cert=other_cert, other_key=other_key, client_cert=client_cert,
               client_key=client_key, expired_cert=expired_cert, expired_key=expired_key,
               directory=directory)


def issue_leaf(pki, name, subject_cn="localhost", san="DNS:localhost,IP:127.0.0.1"):
    """Another server certificate from the same CA, as (cert, key) paths under pki.directory."""
    return _leaf(pki.directory, name, subject_cn, san)


def serial_of(cert_path):
    """The certificate's serial number as openssl prints it (upper-case hex)."""
    proc = subprocess.run(["openssl", "x509", "-in", str(cert_path), "-noout", "-serial"],
                          capture_output=True, text=True, timeout=60, check=True)
    return proc.stdout.strip().split("=", 1)[1]
