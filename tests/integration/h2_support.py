"""HTTP/2 helpers shared by the integration tests of `hammer serve` and `hammer dark`: h2spec,
the HTTP/2 conformance suite (https://github.com/summerwind/h2spec, installed by
scripts/go-deps.sh), run with its JUnit report read back; and hand-made frames (RFC 9113 §4.1)
for the faults no client library sends."""
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from prerequisites import require

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def h2spec_binary():
    found = shutil.which("h2spec") or str(Path.home() / "go" / "bin" / "h2spec")
    require(os.access(found, os.X_OK), "h2spec is not installed", "scripts/go-deps.sh")
    return found


def h2spec_run(port, tmp_path, *extra):
    """Runs every h2spec case against 127.0.0.1:port; returns (process, cases, passed,
    not_passed), not_passed naming each case that failed, erred or was skipped. The requests go
    to /bytes/1000 (a route of `hammer serve`): h2spec skips 6.9.2/3 (a window made negative)
    unless the answer has a body larger than the window it sets."""
    report = tmp_path / "h2spec.xml"
    r = subprocess.run([h2spec_binary(), "-h", "127.0.0.1", "-p", str(port), "-P", "/bytes/1000",
                        "-o", "5", "-j", str(report), *extra], capture_output=True, text=True,
                       timeout=600)
    cases, not_passed = 0, []
    # A failure's message may quote raw frame bytes (NULs), which XML does not allow.
    text = re.sub(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]", b"?", report.read_bytes())
    for suite in ET.fromstring(text).iter("testsuite"):
        for case in suite.iter("testcase"):
            cases += 1
            for outcome in ("failure", "error", "skipped"):
                if case.find(outcome) is not None:
                    not_passed.append((outcome, case.get("package"), case.get("classname")))
    return r, cases, cases - len(not_passed), not_passed


def frame(kind, flags, stream, payload=b"", length=None):
    """An HTTP/2 frame header (RFC 9113 §4.1) and payload, written by hand."""
    n = len(payload) if length is None else length
    return n.to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


def request_block(path, authority="127.0.0.1"):
    """An HPACK header block (RFC 7541) for GET `path` over http: static-table entries for
    :method GET and :scheme http, literals without indexing for :path and :authority."""
    def literal(index, value):
        data = value.encode()
        assert len(data) < 127
        return bytes([index, len(data)]) + data
    return b"\x82\x86" + literal(4, path) + literal(1, authority)
