"""Records a genuine HAR file: Debian's headless Chromium, driven by playwright-core
(playwright_chromium.py), visits a page served on loopback and Playwright's recordHar writes what
the browser sent. Playwright's recorder omits data: URLs; entries for those are added from the
browser's own Network.requestWillBeSent events, shaped as Chrome DevTools exports them.
"""
from pathlib import Path

import playwright_chromium

RECORDER_JS = r"""
const fs = require('fs');
(async () => {
  const [url, harPath, doneTitle] = process.argv.slice(2);
  const browser = await launch();
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


def record_har(url, har_path, workdir, done_title="done", timeout=120):
    """Visits url until document.title == done_title; the HAR goes to har_path."""
    playwright_chromium.run_script(RECORDER_JS, [url, har_path, done_title], workdir,
                                   timeout=timeout)
    return Path(har_path)
