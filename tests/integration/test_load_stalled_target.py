"""`hammer load` against a target that stalls mid-run.

- `hammer serve` frozen with SIGSTOP (its kernel still accepts connections and reads requests;
  nothing answers): the open loop keeps its schedule, every request is accounted for, the
  unanswered ones as timeouts that fire at the configured --timeout, and the records show the
  gap.
- The target's host name stops resolving, then comes back: the schedule is kept, the requests
  of the outage fail as `dns` at once, and requests are answered again after --dns-ttl.
"""
import json
import re
import signal
import subprocess
import urllib.request

from harness import HAMMER, HammerServe, wait_for

RATE = 200
SECONDS = 3
TIMEOUT_S = 0.5


def test_open_loop_against_a_stopped_server(tmp_path):
    serve = HammerServe("--threads", "1")
    summary_path = tmp_path / "summary.json"
    load = None
    try:
        load = subprocess.Popen([HAMMER, "load", serve.url("/"), "--rate", str(RATE),
                                 "-d", f"{SECONDS}s", "--timeout", f"{int(TIMEOUT_S * 1000)}ms",
                                 "-c", "1000", "--timestamps", "--summary-json",
                                 str(summary_path)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Frozen once it has answered a fifth of the run.
        wait_for(lambda: serve.stats()["requests"] >= RATE * SECONDS // 5, timeout=30,
                 what="hammer serve answering")
        serve.proc.send_signal(signal.SIGSTOP)
        out, err = load.communicate(timeout=60)
    finally:
        serve.proc.send_signal(signal.SIGCONT)
        serve.stop()
        if load is not None and load.poll() is None:
            load.kill()
            load.wait()
    assert load.returncode == 0, err
    summary = json.loads(summary_path.read_text())

    # The schedule was kept: every request due was sent, none waited for a slot or was dropped.
    assert summary["requests"] == RATE * SECONDS, {k: v for k, v in summary.items() if k != "keys"}
    assert summary["late_no_slot"] == 0 and summary["dropped"] == 0, summary
    # Every request accounted for: answered before the stop, or a timeout.
    assert summary["succeeded"] > 0 and summary["failed"] > 0, summary
    assert summary["succeeded"] + summary["failed"] == summary["requests"]
    assert summary["failures"] == {"timeout": summary["failed"]}, summary
    # The last request was due 1/RATE before the end of the schedule; it timed out TIMEOUT_S
    # later (±10 %), and the run ended there.
    timeout_fired = summary["seconds"] - (SECONDS - 1 / RATE)
    assert abs(timeout_fired - TIMEOUT_S) <= TIMEOUT_S * 0.1, summary["seconds"]

    # The records (KEY<TAB>SECONDS<TAB>END_MS, failures with an empty SECONDS): one a request,
    # every success ended before the stall, and every timeout TIMEOUT_S after it began.
    records = [line.split("\t") for line in out.splitlines()]
    assert len(records) == summary["requests"]
    successes = [int(end) for _, seconds, end in records if seconds]
    timeouts = [int(end) for _, seconds, end in records if not seconds]
    assert (len(successes), len(timeouts)) == (summary["succeeded"], summary["failed"])
    assert max(successes) < min(timeouts) - TIMEOUT_S * 1000 * 0.9
    # The gap: the timeouts' ends are spread over the stalled part of the schedule at RATE.
    stalled_ms = max(timeouts) - min(timeouts)
    assert abs(stalled_ms - (len(timeouts) - 1) * 1000 / RATE) <= 100, stalled_ms


# A host name only the run's own mount namespace knows (.test is reserved, RFC 2606): /etc/hosts
# and /etc/nsswitch.conf are files of the test bind-mounted over the system's (`unshare --mount
# --map-root-user`, util-linux), so lookups read the test's hosts file and never reach DNS. The
# test rewrites that file in place (same inode, so the namespace sees it) to make the name stop
# resolving and to bring it back.
NAME = "hammer-target.test"
DNS_TTL_S = 0.2


def _scrape_outcomes(address):
    """{outcome: count} of hammer_load_requests_total, summed over keys."""
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as r:
        text = r.read().decode()
    outcomes = {}
    for line in text.splitlines():
        m = re.match(r'hammer_load_requests_total\{.*outcome="([a-z_0-9]+)".*\} (\d+)', line)
        if m:
            outcomes[m.group(1)] = outcomes.get(m.group(1), 0) + int(m.group(2))
    return outcomes


def test_open_loop_while_the_name_stops_resolving(tmp_path):
    serve = HammerServe("--threads", "1")
    hosts = tmp_path / "hosts"
    known = f"127.0.0.1 localhost\n127.0.0.1 {NAME}\n"
    hosts.write_text(known)
    nsswitch = tmp_path / "nsswitch.conf"
    nsswitch.write_text("hosts: files\n")
    summary_path = tmp_path / "summary.json"
    seconds = 6
    # Connection: close makes every request open a connection, so each one looks the name up
    # (through the --dns-ttl cache); keep-alive connections would outlive the name.
    argv = [HAMMER, "load", f"http://{NAME}:{serve.port}/", "--rate", str(RATE), "-d",
            f"{seconds}s", "-H", "Connection: close", "--dns-ttl", f"{int(DNS_TTL_S * 1000)}ms",
            "-t", "1", "-c", "100", "--emit", "none", "--metrics-listen", "127.0.0.1:0",
            "--summary-json", str(summary_path)]
    script = (f"mount --bind {hosts} /etc/hosts && mount --bind {nsswitch} /etc/nsswitch.conf "
              "&& exec \"$@\"")
    load = None
    try:
        load = subprocess.Popen(["unshare", "--mount", "--map-root-user", "sh", "-c", script,
                                 "sh", *[str(a) for a in argv]],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = load.stderr.readline()
        assert "metrics at http://" in line, line + load.stderr.read()
        metrics = line.split("http://", 1)[1].split("/", 1)[0]
        wait_for(lambda: _scrape_outcomes(metrics).get("success", 0) >= RATE // 2, timeout=30,
                 what="requests answered through the name")
        hosts.write_text("127.0.0.1 localhost\n")  # in place: the namespace's /etc/hosts
        wait_for(lambda: _scrape_outcomes(metrics).get("dns", 0) >= RATE // 2, timeout=30,
                 what="requests failing as dns once the name is gone")
        answered_while_gone = serve.stats()["requests"]
        hosts.write_text(known)
        wait_for(lambda: serve.stats()["requests"] >= answered_while_gone + RATE // 2,
                 timeout=30, what="requests answered again once the name is back")
        _, err = load.communicate(timeout=60)
    finally:
        serve.stop()
        if load is not None and load.poll() is None:
            load.kill()
            load.wait()
    assert load.returncode == 0, err
    summary = json.loads(summary_path.read_text())
    # The schedule was kept through the outage, and every request is accounted for: answered, or
    # a dns failure (no other type: the target itself never failed).
    assert summary["requests"] == RATE * seconds, summary
    assert summary["late_no_slot"] == 0 and summary["dropped"] == 0, summary
    assert summary["succeeded"] + summary["failed"] == summary["requests"], summary
    assert set(summary["failures"]) == {"dns"}, summary
    assert summary["failed"] >= RATE // 2 and summary["succeeded"] >= RATE, summary
    # A dns failure costs no wait: nothing timed out, and the run ended on schedule.
    assert summary["seconds"] < seconds + 1, summary
