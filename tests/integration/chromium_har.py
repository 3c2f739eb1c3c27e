"""Records a genuine HAR file: Debian's headless Chromium, driven by playwright-core, visits a
page served on loopback and Playwright's recordHar writes what the browser sent.

playwright-core comes from the npm registry (scripts/npm-deps.sh installs the version locked in
scripts/npm/ into ~/.cache/hammer-npm, or $HAMMER_NPM_DIR); it never downloads a browser: the
launch uses /usr/bin/chromium (or $CHROMIUM). `available()` says why recording cannot work here,
or returns None. Playwright's recorder omits data: URLs; entries for those are added from the
browser's own Network.requestWillBeSent events, shaped as Chrome DevTools exports them.
"""
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NPM_DIR = Path(os.environ.get("HAMMER_NPM_DIR", Path.home() / ".cache" / "hammer-npm"))
PLAYWRIGHT_CORE = NPM_DIR / "node_modules" / "playwright-core"
CHROMIUM = os.environ.get("CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")

# The flags are those this machine needs: no sandbox as root, and none of Chromium's own
# background connections (the network outside loopback is closed).
RECORDER_JS = r"""
const fs = require('fs');
const { chromium } = require(process.env.PLAYWRIGHT_CORE);
(async () => {
  const [url, harPath, doneTitle] = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    headless: true,
    timeout: 60000,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const dataUrls = [];
  try {
    // content 'embed': request bodies are written as postData.text (with 'omit' the text is
    // empty and only a form's params remain).
    const context = await browser.newContext({ recordHar: { path: harPath, content: 'embed' } });
    const page = await context.newPage();
    page.on('console', (m) => console.error(`console.${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => console.error(`page error: ${e}`));
    page.on('requestfailed',
            (r) => console.error(`request failed: ${r.url()} ${r.failure()?.errorText}`));
    // Playwright's recorder leaves out data: URLs, which Chrome DevTools' "Save all as HAR"
    // keeps; the browser's own Network events say which ones it loaded.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    cdp.on('Network.requestWillBeSent', (e) => {
      if (e.request.url.startsWith('data:')) dataUrls.push(e);
    });
    await page.goto(url, { waitUntil: 'load', timeout: 30000 });
    await page.waitForFunction((t) => document.title === t, doneTitle, { timeout: 30000 });
    await context.close();  // writes the HAR
  } finally {
    await browser.close();
  }
  const har = JSON.parse(fs.readFileSync(harPath, 'utf8'));
  for (const e of dataUrls) {
    const mime = (e.request.url.match(/^data:([^;,]*)/) || [])[1] || 'text/plain';
    har.log.entries.push({
      startedDateTime: new Date(e.wallTime * 1000).toISOString(),
      time: 0,
      request: { method: e.request.method, url: e.request.url, httpVersion: '', cookies: [],
                 headers: [], queryString: [], headersSize: -1, bodySize: 0 },
      response: { status: 200, statusText: 'OK', httpVersion: '', cookies: [], headers: [],
                  content: { size: 0, mimeType: mime }, redirectURL: '', headersSize: -1,
                  bodySize: 0 },
      cache: {},
      timings: { send: 0, wait: 0, receive: 0 },
      comment: 'data: URL seen by Chromium (Network.requestWillBeSent)',
    });
  }
  har.log.entries.sort((a, b) => Date.parse(a.startedDateTime) - Date.parse(b.startedDateTime));
  fs.writeFileSync(harPath, JSON.stringify(har, null, 2));
})().catch((e) => { console.error(e && e.stack || String(e)); process.exit(1); });
"""


def ensure_playwright():
    """Runs scripts/npm-deps.sh (quick when already installed)."""
    subprocess.run([str(ROOT / "scripts" / "npm-deps.sh")], check=True, timeout=600,
                   capture_output=True)


def available():
    if not shutil.which("node"):
        return "node is not installed"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    if not (PLAYWRIGHT_CORE / "package.json").exists():
        try:
            ensure_playwright()
        except (subprocess.SubprocessError, OSError) as e:
            return f"playwright-core could not be installed: {e}"
    if not (PLAYWRIGHT_CORE / "package.json").exists():
        return f"playwright-core missing under {NPM_DIR}"
    return None


def record_har(url, har_path, workdir, done_title="done", timeout=120):
    """Visits url until document.title == done_title; the HAR goes to har_path."""
    workdir = Path(workdir)
    script = workdir / "record_har.js"
    script.write_text(RECORDER_JS)
    profile = workdir / "home"  # Chromium writes its profile and crash dumps under HOME
    profile.mkdir(exist_ok=True)
    env = dict(os.environ, PLAYWRIGHT_CORE=str(PLAYWRIGHT_CORE), CHROMIUM=CHROMIUM,
               HOME=str(profile))
    proc = subprocess.run(["node", str(script), url, str(har_path), done_title], env=env,
                          capture_output=True, text=True, timeout=timeout, cwd=workdir)
    if proc.returncode != 0:
        raise RuntimeError(f"recording the HAR failed ({proc.returncode}):\n{proc.stdout}\n"
                           f"{proc.stderr}")
    return Path(har_path)
