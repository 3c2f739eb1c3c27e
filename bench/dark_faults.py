"""Broken dark clusters for the isolation rows of bench/dark_proxy.py: a server on
127.0.0.1 that fails in one way, started as a process of its own (so that it can be pinned and
killed like the other upstreams).

    python3 bench/dark_faults.py KIND     prints the port it listens on, then serves until killed

KIND:
- `black-hole`: accepts every connection, reads and drops what arrives, and never answers;
  connections stay open until the peer closes them (after its timeout).
- `never-accepts`: listens with a small backlog and never calls accept(2): the first
  connections complete their TCP handshake into the backlog and wait there, later SYNs are
  dropped by the kernel, so connecting hangs.
- `reset`: accepts every connection and closes it at once with a zero linger, so the peer gets
  a TCP RST instead of an answer.

Standard library only; the accept loop is non-blocking (selectors), one thread."""
from __future__ import annotations

import selectors
import socket
import struct
import sys

KINDS = ("black-hole", "never-accepts", "reset")
NEVER_ACCEPTS_BACKLOG = 8
LINGER_RESET = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() sends RST


def serve(kind: str) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(NEVER_ACCEPTS_BACKLOG if kind == "never-accepts" else 4096)
    print(listener.getsockname()[1], flush=True)
    if kind == "never-accepts":
        while True:
            selectors.DefaultSelector().select()  # never returns: nothing is registered
    listener.setblocking(False)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, None)
    held: dict[int, socket.socket] = {}
    while True:
        for key, _ in selector.select():
            if key.data is not None:  # a held connection: readable means data or its close
                conn = key.data
                try:
                    data = conn.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    selector.unregister(conn)
                    held.pop(conn.fileno(), None)
                    conn.close()
                continue
            while True:
                try:
                    conn, _ = listener.accept()
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:  # out of descriptors and the like: try again next round
                    break
                if kind == "reset":
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_RESET)
                    conn.close()
                else:
                    # Black hole: keep it open; its requests are read and dropped, and its
                    # close is noticed, so descriptors go back when the peer gives up.
                    conn.setblocking(False)
                    held[conn.fileno()] = conn
                    selector.register(conn, selectors.EVENT_READ, conn)


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in KINDS:
        sys.exit(f"usage: {sys.argv[0]} {{{'|'.join(KINDS)}}}")
    try:
        serve(sys.argv[1])
    except KeyboardInterrupt:
        pass
