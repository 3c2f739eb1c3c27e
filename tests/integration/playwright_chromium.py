"""Debian's headless Chromium driven by playwright-core, for the tests that need a real browser
(recording a HAR, looking at the HTML report).

playwright-core comes from the npm registry: `make deps-test` (scripts/npm-deps.sh) installs the
version locked in scripts/npm/ into ~/.cache/hammer-npm, or $HAMMER_NPM_DIR. It never downloads a
browser: scripts launch /usr/bin/chromium (or $CHROMIUM). Nothing here installs anything during a
test run: require() fails at once, naming the command that installs what is missing.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

NPM_DIR = Path(os.environ.get("HAMMER_NPM_DIR", Path.home() / ".cache" / "hammer-npm"))
PLAYWRIGHT_CORE = NPM_DIR / "node_modules" / "playwright-core"
CHROMIUM = os.environ.get("CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")

# The launch every script uses: no sandbox as root, and none of Chromium's own background
# connections (the network outside loopback is closed).
LAUNCH_JS = r"""
const { chromium } = require(process.env.PLAYWRIGHT_CORE);
function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM,
    headless: true,
    timeout: 60000,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
"""


def missing():
    """What is missing to run a playwright script here, with the command that installs it; or
    None."""
    if not shutil.which("node"):
        return "node is not installed: run `make deps-test` (scripts/deps.sh test)"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM}: run `make deps-test` (scripts/deps.sh test)"
    if not (PLAYWRIGHT_CORE / "package.json").exists():
        return (f"playwright-core is not installed under {NPM_DIR}: run `make deps-test` "
                "(scripts/npm-deps.sh)")
    return None


def require():
    """Fails the calling test at once when a playwright script cannot run here."""
    why = missing()
    if why:
        pytest.fail(why, pytrace=False)


def run_script(body_js, args, workdir, timeout=120):
    """Runs a Node.js script (LAUNCH_JS, then `body_js`) with `args` in `workdir`; returns its
    stdout. `body_js` calls launch() for a browser and reads its arguments from process.argv."""
    require()
    workdir = Path(workdir)
    script = workdir / "playwright-script.js"
    script.write_text(LAUNCH_JS + body_js)
    home = workdir / "home"  # Chromium writes its profile and crash dumps under HOME
    home.mkdir(exist_ok=True)
    env = dict(os.environ, PLAYWRIGHT_CORE=str(PLAYWRIGHT_CORE), CHROMIUM=CHROMIUM,
               HOME=str(home))
    proc = subprocess.run(["node", str(script), *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=timeout, cwd=workdir)
    if proc.returncode != 0:
        raise RuntimeError(f"the playwright script failed ({proc.returncode}):\n{proc.stdout}\n"
                           f"{proc.stderr}")
    return proc.stdout
