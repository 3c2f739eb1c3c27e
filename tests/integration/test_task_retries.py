"""Retried work counted once: `hammer load --emit partials` run as two attempts of one task
(Hadoop's attempt ids `..._m_000000_0` and `..._1`, or two pods of one Kubernetes Indexed Job
completion index) really sends its requests twice, and `hammer stats` keeps one attempt of the
task: the figures are one attempt's, and the dropped attempt is counted and said."""
import re
import subprocess

from harness import HAMMER, url_lines

HADOOP_TASK = "task_1765000000000_0001_m_000000"


def load_partials(urls, env_vars):
    """One `hammer load -n 50 --loop --emit partials` run with the given task environment;
    returns its standard output (the partials)."""
    env = {"PATH": "/usr/bin:/bin", **env_vars}
    proc = subprocess.run([HAMMER, "load", "-n", "50", "--loop", "-c", "2", "--emit", "partials",
                           str(urls)], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def stats(args, input_text=None):
    proc = subprocess.run([HAMMER, "stats", *args], input=input_text, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr


def counts(reducer_output):
    """{key: (errors, count)} from --reducer lines (key sum average max min errors count ...)."""
    rows = {}
    for line in reducer_output.splitlines():
        fields = line.split("\t")
        rows[fields[0]] = (int(fields[5]), int(fields[6]))
    return rows


def test_two_hadoop_attempts_of_one_task_count_once(serve, tmp_path):
    urls = tmp_path / "urls"
    urls.write_text(url_lines(serve.url("/"), serve.url("/bytes/16")))
    before = serve.stats()["requests"]
    attempt = {}
    for n in (0, 1):
        attempt[n] = tmp_path / f"part-attempt-{n}"
        attempt[n].write_text(load_partials(urls, {
            "mapreduce_task_partition": "0",
            "mapreduce_job_maps": "1",
            "mapreduce_task_id": HADOOP_TASK,
            "mapreduce_task_attempt_id": f"attempt_1765000000000_0001_m_000000_{n}",
        }))
    # Both attempts were real: the server received their 100 requests.
    assert serve.stats()["requests"] - before == 100
    for n in (0, 1):
        lines = attempt[n].read_text().splitlines()
        assert len(lines) == 2
        for line in lines:
            assert re.match(rf"[^\t]+\t#ha1 {HADOOP_TASK} attempt_1765000000000_0001_m_000000_{n} "
                            r"\d{13} 2 ", line), line

    reduced, stderr = stats(["--reducer", attempt[0], attempt[1]])
    assert counts(reduced) == {serve.url("/"): (0, 25), serve.url("/bytes/16"): (0, 25)}
    # Exactly one attempt's figures: the later one, whole.
    assert reduced == stats(["--reducer", attempt[1]])[0]
    assert "reporter:counter:stats,attempts_dropped,1" in stderr, stderr
    assert (f"kept one attempt of each of 1 task, dropped 1 attempt (2 partial lines); task "
            f"{HADOOP_TASK}: kept attempt attempt_1765000000000_0001_m_000000_1 (complete), "
            f"dropped attempt_1765000000000_0001_m_000000_0 (complete)") in stderr, stderr

    # A combiner between them passes the kept attempt on: the reducer after it still counts 50.
    combined, _ = stats(["--combine", attempt[0], attempt[1]])
    assert combined == attempt[1].read_text()
    assert counts(stats(["--reducer"], input_text=combined)[0]) == counts(reduced)


def test_a_retried_kubernetes_pod_counts_once(serve, tmp_path):
    """The recipe's layout (integrations/kubernetes/load-test-job.yaml): every pod's partials on
    its stdout, all pods' logs concatenated into one `hammer stats --table`. Completion index 0
    ran twice (its first pod failed and was replaced), index 1 once."""
    urls = tmp_path / "urls"
    urls.write_text(url_lines(serve.url("/")))
    before = serve.stats()["requests"]
    logs = ""
    for index, pod in ((0, "hammer-load-0-x7k2p"), (0, "hammer-load-0-q9w4z"),
                       (1, "hammer-load-1-m3n8v")):
        logs += load_partials(urls, {"JOB_COMPLETION_INDEX": str(index), "HOSTNAME": pod})
    assert serve.stats()["requests"] - before == 150

    table, stderr = stats(["--table"], input_text=logs)
    total = re.search(r"^TOTAL\s+(\d+)\s+(\d+)\s+(\d+)", table, re.M)  # requests ok errors
    assert total and (int(total.group(1)), int(total.group(2)), int(total.group(3))) == \
        (100, 100, 0), table
    assert "kept one attempt of each of 2 tasks, dropped 1 attempt (1 partial lines); task 0: " \
        "kept attempt hammer-load-0-q9w4z (complete), dropped hammer-load-0-x7k2p (complete)" \
        in stderr, stderr

    # Without their origin (plain #hp1, as before) the same runs would have counted 150.
    plain = re.sub(r"\t#ha1 \S+ \S+ \d+ \d+ ", "\t#hp1 ", logs)
    table, _ = stats(["--table"], input_text=plain)
    assert re.search(r"^TOTAL\s+150\s+150\s+0", table, re.M), table
