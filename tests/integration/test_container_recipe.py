"""The container recipe checked against reality, without a container runtime.

integrations/container/Containerfile runs hammer on debian:bookworm-slim with a list of Debian
packages; integrations/kubernetes/load-test-job.yaml runs that image. What would make the pod
fail to start is a library the binary loads that no installed package provides, or a command
line hammer rejects. So:
- the runtime package list is exactly the .deb's Depends (dpkg-shlibdeps over the binary) plus
  its Recommends;
- every library `ldd` reports for the built binary belongs (dpkg -S) to one of those packages;
- the Job runs the image's `hammer` with a command line the built hammer accepts.
"""
import json
import re
import shlex
import subprocess
from pathlib import Path

from harness import HAMMER, ROOT
from packaging import build_deb, control_field, linked_libraries, owning_package, package_names

CONTAINERFILE = ROOT / "integrations" / "container" / "Containerfile"
JOB = ROOT / "integrations" / "kubernetes" / "load-test-job.yaml"


def runtime_stage():
    """The instructions of the last stage, continuation lines joined, comments dropped."""
    lines = [line for line in CONTAINERFILE.read_text().splitlines()
             if not line.lstrip().startswith("#")]
    instructions = re.split(r"\n(?=[A-Z]+ )", "\n".join(lines).replace("\\\n", " "))
    starts = [i for i, text in enumerate(instructions) if text.startswith("FROM ")]
    return instructions[starts[-1]:]


def runtime_packages():
    """(base image, the packages its `apt-get install` names)."""
    stage = runtime_stage()
    base = stage[0].split()[1]
    installs = [re.search(r"apt-get install((?: +[-\w.+]+)+)", text) for text in stage]
    installs = [m.group(1).split() for m in installs if m]
    assert len(installs) == 1, f"expected one apt-get install in the runtime stage: {installs}"
    return base, {word for word in installs[0] if not word.startswith("-")}


def test_runtime_image_installs_exactly_the_packages_the_deb_names():
    base, packages = runtime_packages()
    assert base == "debian:bookworm-slim"
    deb = build_deb()
    assert packages == package_names(control_field(deb, "Depends")) | \
        package_names(control_field(deb, "Recommends"))


def test_every_library_the_binary_loads_comes_from_the_runtime_packages():
    _, packages = runtime_packages()
    libraries = linked_libraries(HAMMER)
    for soname in ("libssl.so.3", "libzookeeper_mt.so.2", "libre2.so.9", "libc.so.6"):
        assert soname in libraries  # ldd was read correctly
    providers = {soname: owning_package(path) for soname, path in libraries.items()}
    assert {s: p for s, p in providers.items() if p not in packages} == {}


def test_runtime_stage_puts_hammer_on_the_path_and_runs_it_unprivileged():
    stage = "\n".join(runtime_stage())
    assert re.search(r"^COPY --from=build /install/usr/ /usr/$", stage, re.M)
    assert re.search(r'^ENTRYPOINT \["hammer"\]$', stage, re.M)
    assert re.search(r"^USER [1-9][0-9]*$", stage, re.M)
    build = CONTAINERFILE.read_text()
    assert "-DCMAKE_INSTALL_PREFIX=/usr" in build and "DESTDIR=/install" in build


def test_kubernetes_job_runs_the_image_with_a_command_line_hammer_accepts(tmp_path):
    text = JOB.read_text()
    assert re.search(r"^ +image: \$\{HAMMER_IMAGE\}$", text, re.M)
    command = json.loads(re.search(r"command: (\[[^\]]*\])", text).group(1))
    assert command[:2] == ["hammer", "load"]
    urls = tmp_path / "urls.txt"
    urls.write_text("http://127.0.0.1:9/a\nhttp://127.0.0.1:9/b\n")  # never sent: --dry-run
    args = [str(urls) if a == "/urls/urls.txt" else a for a in command[1:]]
    args = [a.replace("${START}", "4102444800") for a in args]  # 2100-01-01, never reached
    proc = subprocess.run([HAMMER, *args, "--dry-run"], capture_output=True, text=True,
                          timeout=60, env={"JOB_COMPLETION_INDEX": "3", "PATH": "/usr/bin"})
    assert proc.returncode == 0, proc.stderr
    assert "GET http://127.0.0.1:9/a" in proc.stdout


def test_kubernetes_verdict_is_a_hammer_stats_command_line_whose_exit_is_the_runs(tmp_path):
    """The recipe's last step, `kubectl logs ... | hammer stats ...`, judges the pods' partials:
    exit 0 when they pass its thresholds, 3 when the merge fails one."""
    comment = "\n".join(line.lstrip("# ") for line in JOB.read_text().splitlines()
                        if line.startswith("#"))
    verdict = re.search(r"\| (hammer stats [^\n]*)", comment.replace("\\\n", " "))
    assert verdict, comment
    args = shlex.split(verdict.group(1))
    assert "--threshold" in args
    pods = []
    for seconds in ("0.010", "0.020", "0.400"):  # the third pod is slow
        combine = subprocess.run([HAMMER, "stats", "--combine"], capture_output=True, text=True,
                                 input="".join(f"http://127.0.0.1:9/a\t{seconds}\n"
                                               for _ in range(50)), timeout=60)
        assert combine.returncode == 0, combine.stderr
        pods.append(combine.stdout)
    fast = subprocess.run([HAMMER, *args[1:]], input="".join(pods[:2]), capture_output=True,
                          text=True, timeout=60)
    assert fast.returncode == 0, fast.stderr
    assert re.search(r"threshold p99<250ms\s+passed  p99 = 20ms", fast.stderr), fast.stderr
    merged = subprocess.run([HAMMER, *args[1:]], input="".join(pods), capture_output=True,
                            text=True, timeout=60)
    assert merged.returncode == 3, merged.stderr
    assert re.search(r"threshold p99<250ms\s+FAILED  p99 = 400ms, limit < 250ms", merged.stderr)
    assert "TOTAL" in merged.stdout
