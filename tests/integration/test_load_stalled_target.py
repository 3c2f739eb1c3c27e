"""`hammer load` against a target that stops answering mid-run: `hammer serve` frozen with
SIGSTOP (its kernel still accepts connections and reads requests; nothing answers). The open
loop keeps its schedule, every request is accounted for, the unanswered ones as timeouts that
fire at the configured --timeout, and the records show the gap."""
import json
import signal
import subprocess

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
    assert summary["requests"] == RATE * SECONDS, summary
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
