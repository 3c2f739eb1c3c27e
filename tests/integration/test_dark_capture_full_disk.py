"""A capture directory on a file system that fills up (issue 47, item 5): dark keeps answering
every user, the capture lines it cannot write are dropped and counted (/metrics and the end
summary), and the file holds complete lines only.

The file system is a 256 KiB tmpfs mounted over an empty directory in the proxy's own mount
namespace (`unshare --mount --map-root-user`, util-linux), so nothing outside the test sees it;
the test reads the file through /proc/PID/root, which shows the proxy's view of the files.
"""
import http.client
import json
from pathlib import Path

from prerequisites import require_program

REQUESTS = 300
BODY_BYTES = 2000  # about 2.8 kB of base64 a line: 300 lines are over 3 times the tmpfs


def test_a_full_capture_file_system_drops_lines_and_never_a_user(serve, proxies, tmp_path):
    require_program("unshare", "util-linux")
    captures = tmp_path / "captures"
    captures.mkdir()
    mount = 'mount -t tmpfs -o size=256k hammer-capture "$0" && exec "$@"'
    proxy = proxies("--upstream", f"http://{serve.address}", "--capture",
                    str(captures / "capture.jsonl"),
                    wrapper=["unshare", "--mount", "--map-root-user", "sh", "-c", mount,
                             str(captures)])
    statuses = []
    connection = http.client.HTTPConnection(proxy.host, proxy.port, timeout=10)
    for i in range(REQUESTS):
        body = bytes((i * 31 + j * 7) % 251 for j in range(BODY_BYTES))
        connection.request("POST", f"/full/{i}", body=body,
                           headers={"Content-Type": "application/octet-stream"})
        response = connection.getresponse()
        response.read()
        statuses.append(response.status)
    connection.close()
    assert statuses == [200] * REQUESTS

    def accounted(m):
        return (m.get("hammer_dark_capture_lines_total", 0) +
                m.get('hammer_dark_capture_dropped_total{reason="write_error"}', 0) +
                m.get('hammer_dark_capture_dropped_total{reason="queue_full"}', 0))

    proxy.wait_for_metric("hammer_dark_capture_lines_total",
                          lambda _: accounted(proxy.metrics()) == REQUESTS)
    m = proxy.metrics()
    written = int(m["hammer_dark_capture_lines_total"])
    dropped = int(m['hammer_dark_capture_dropped_total{reason="write_error"}'])
    assert written > 0 and dropped > 0, m

    # The file as the proxy sees it, on its tmpfs: full, and of complete lines only.
    seen = Path(f"/proc/{proxy.proc.pid}/root") / str(captures).lstrip("/") / "capture.jsonl"
    data = seen.read_bytes()
    assert len(data) <= 256 * 1024
    assert data.endswith(b"\n")
    lines = [json.loads(line) for line in data.decode().splitlines()]
    assert len(lines) == written
    numbers = [int(e["url"].rsplit("/", 1)[1]) for e in lines]
    assert numbers[0] == 0 and numbers == sorted(numbers), numbers
    assert not any(captures.iterdir())  # outside the namespace the directory stays empty

    proxy.stop()
    assert f"lines written {written}, dropped (queue full) 0, dropped (write error) {dropped}" \
        in proxy.stderr, proxy.stderr
