"""The /metrics text of `hammer dark` and of `hammer load --metrics-listen` passes `promtool
check metrics` (Prometheus's own parser and linter: every family with its # HELP and # TYPE,
names and label values as the text format has them), with label values that need escaping: a
dark cluster and a load key named with a quote, a backslash and spaces."""
import subprocess
import urllib.error
import urllib.request

from harness import HAMMER, wait_for
from prerequisites import require_program

ODD = 'odd "name" \\ x'


def promtool_check(text):
    require_program("promtool", "prometheus")
    checked = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                             text=True, timeout=60)
    assert checked.returncode == 0, (checked.stdout + checked.stderr, text)
    return checked


def test_dark_metrics_pass_promtool_with_an_odd_cluster_name(servers, proxies):
    upstream, dark = servers(), servers()
    proxy = proxies("--upstream", f"http://{upstream.address}",
                    "--dark", f"{ODD}=http://{dark.address}", "--compare")
    for path in ("/", "/status/503", "/status/404", "/bytes/10"):
        try:
            with urllib.request.urlopen(proxy.url(path), timeout=10) as r:
                r.read()
        except urllib.error.HTTPError as e:
            assert e.code in (503, 404), e
    m = proxy.settled_metrics()
    assert m['hammer_dark_sent_total{cluster="odd \\"name\\" \\\\ x"}'] >= 1, m
    text = proxy.get_admin("/metrics")
    promtool_check(text)
    assert "# HELP hammer_dark_effective_rate " in text
    assert "# HELP hammer_dark_verdict " in text  # --compare adds the verdict's families


def test_load_metrics_pass_promtool_with_an_odd_key(serve, tmp_path):
    urls = tmp_path / "urls.txt"
    urls.write_text(f"{serve.url('/')}\n{serve.url('/status/500')}\n")
    rewrite_name = ODD.replace("\\", "\\\\")  # RE2's rewrite string escapes a backslash
    load = subprocess.Popen(
        [HAMMER, "load", str(urls), "--loop", "-n", "200", "--rate", "400", "-c", "10", "-t", "1",
         "--emit", "none", "--key-pattern", ".*/status/.*=" + rewrite_name,
         "--metrics-listen", "127.0.0.1:0", "--metrics-linger", "30s"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = load.stderr.readline()
        assert "metrics at http://" in line, line
        address = line.split("http://", 1)[1].split("/", 1)[0]

        def ended():
            with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as r:
                text = r.read().decode()
            # Before the run, running is 0 too: the end is when it is 0 with requests counted.
            done = "\nhammer_load_running 0\n" in text and 'outcome="http_5xx"' in text
            return text if done else None

        text = wait_for(ended, timeout=60, what="the run's end in /metrics")
        promtool_check(text)
        assert 'key="odd \\"name\\" \\\\ x",outcome="http_5xx"' in text, text
        assert "# TYPE hammer_load_late_total counter" in text
    finally:
        load.kill()
        load.wait()
