"""Ask real bash, zsh and fish what they complete for a command line, with hammer's completions.

bash: the completion function is called as bash's programmable completion calls it (COMP_WORDS,
COMP_CWORD), and COMPREPLY is read back. fish: `complete -C` prints the candidates. zsh has no
non-interactive interface, so an interactive zsh runs on a pseudo-terminal: the line is typed,
TAB pressed, and the edited line is read back by turning it into an `echo` (Ctrl-A, then
"echo BUF:", then Enter). Every wait has a deadline.
"""
import os
import pty
import re
import select
import shlex
import signal
import subprocess
import tempfile
import time


def bash_complete(script, words, cwd=None):
    """COMPREPLY for the command line `words` (the last word is being completed), in `cwd`."""
    program = (f"source {shlex.quote(str(script))}; COMP_WORDS=({' '.join(map(shlex.quote, words))});"
               f" COMP_CWORD={len(words) - 1}; _hammer; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    out = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True,
                         text=True, timeout=30, check=True, cwd=cwd).stdout
    return [w for w in out.split("\n") if w]


def fish_complete(line, script=None, cwd=None):
    """The candidates (without descriptions) fish offers for `line` in `cwd`; `script` is
    sourced first, otherwise fish finds hammer's completions where it looks by itself."""
    program = (f"source {shlex.quote(str(script))}; " if script else "") + \
        f"complete --do-complete={shlex.quote(line)}"
    # Not --no-config: fish's own share/config.fish is what adds the vendor completion
    # directories; the user's configuration is left out by an empty HOME.
    with tempfile.TemporaryDirectory() as home:
        env = {"PATH": os.environ["PATH"], "HOME": home, "XDG_CONFIG_HOME": home,
               "XDG_DATA_HOME": home}
        out = subprocess.run(["fish", "-c", program], capture_output=True, text=True,
                             timeout=30, check=True, cwd=cwd, env=env).stdout
    return [entry.split("\t")[0] for entry in out.split("\n") if entry]


def zsh_complete(line, fpath=None, cwd=None, timeout=30.0):
    """The command line after typing `line` and pressing TAB once in an interactive zsh with
    compinit, in directory `cwd`; `fpath` is put first on zsh's function path (default: zsh's
    own)."""
    with tempfile.TemporaryDirectory() as home:
        pid, fd = pty.fork()
        if pid == 0:  # the child: an interactive zsh without any user configuration
            os.chdir(cwd or home)
            os.execvpe("zsh", ["zsh", "-f", "-i"],
                       {"PATH": os.environ["PATH"], "HOME": home, "TERM": "xterm"})
        try:
            setup = (f"fpath=({shlex.quote(str(fpath))} $fpath); " if fpath else "") + \
                "autoload -Uz compinit && compinit -u -D && PS1='%% ' && echo READY-$((6*7))\n"
            _send(fd, setup)
            _read_until(fd, "READY-42", timeout)
            _send(fd, line + "\t")
            _send(fd, "\x01echo BUF:\n")  # Ctrl-A, prefix the line with echo, run it
            out = _read_until(fd, r"(?:^|\n)BUF:([^\r\n]*)\r?\n", timeout)
            return re.search(r"(?:^|\n)BUF:([^\r\n]*)\r?\n", out).group(1).rstrip()
        finally:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(fd)


def _send(fd, text):
    os.write(fd, text.encode())


def _read_until(fd, pattern, timeout):
    """Terminal output (escape sequences removed) up to the first match of `pattern`."""
    deadline = time.monotonic() + timeout
    raw = b""
    while True:
        text = re.sub(r"\x1b(\[[0-9;?]*[A-Za-z]|[()][A-Z0-9]|[=>])", "",
                      raw.decode(errors="replace"))
        if re.search(pattern, text):
            return text
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"zsh did not print {pattern!r} within {timeout}s:\n{text}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                raw += os.read(fd, 65536)
            except OSError:  # the terminal closed: zsh exited
                raise AssertionError(f"zsh exited before {pattern!r}:\n{text}")
