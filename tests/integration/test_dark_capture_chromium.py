"""Chromium's traffic through `hammer dark --capture`, replayed against nginx (issue 47, item 5):
the page and the requests its script makes are recorded with the browser's own headers, and
`hammer load --replay` sends them to nginx in the same order (nginx's access log).
"""
import json

import playwright_chromium
from harness import run_hammer
from test_dark_capture import capture_lines

# Loads the page, then makes four requests from it one after the other (a GET with a query, a
# JSON POST to /echo, where nginx reads and logs the body, a PUT, a DELETE), each once the one
# before is answered.
CHROMIUM_FETCHES = r"""
(async () => {
  const [url] = process.argv.slice(2);
  const browser = await launch();
  const page = await browser.newPage();
  await page.goto(url);
  const statuses = await page.evaluate(async () => {
    const out = [];
    const send = async (path, init) => out.push((await fetch(path, init)).status);
    await send('/api/items?page=2');
    await send('/echo', {method: 'POST', headers: {'Content-Type': 'application/json'},
                              body: JSON.stringify({name: 'chromium'})});
    await send('/api/items/7', {method: 'PUT', body: 'seven'});
    await send('/api/items/7', {method: 'DELETE'});
    return out;
  });
  console.log(JSON.stringify(statuses));
  await browser.close();
})().catch((e) => { console.error(e); process.exit(1); });
"""

EXPECTED = [("GET", "/page"), ("GET", "/api/items?page=2"), ("POST", "/echo"),
            ("PUT", "/api/items/7"), ("DELETE", "/api/items/7")]


def test_chromium_traffic_is_captured_and_replayed_in_order(serve, proxies, logged, tmp_path):
    playwright_chromium.require()
    capture = tmp_path / "chromium.jsonl"
    proxy = proxies("--upstream", f"http://{serve.address}", "--capture", str(capture))
    out = playwright_chromium.run_script(CHROMIUM_FETCHES, [proxy.url("/page")], tmp_path)
    assert json.loads(out.strip().splitlines()[-1]) == [200, 200, 200, 200]
    proxy.wait_for_metric("hammer_dark_capture_lines_total", lambda v: v >= len(EXPECTED))
    proxy.stop()

    # The browser may ask for /favicon.ico on its own, at a time of its choosing: left out.
    entries = [e for e in sorted(capture_lines(capture), key=lambda e: e["ts"])
               if not e["url"].endswith("/favicon.ico")]
    prefix = f"http://{proxy.address}"
    assert [(e["method"], e["url"][len(prefix):]) for e in entries] == EXPECTED
    assert all("HeadlessChrome" in e["header"]["User-Agent"][0] for e in entries)
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps(e) + "\n" for e in entries))

    r = run_hammer(["load", "--targets-format", "jsonl", "--replay", "--base-url", logged.url(),
                    "--emit", "none", str(replay)])
    assert r.returncode == 0, r.stderr
    received = logged.log.entries()
    assert [(e["m"], e["u"]) for e in received] == EXPECTED
    assert all("HeadlessChrome" in e["ua"] for e in received)
    assert received[2]["b"] == '{"name":"chromium"}' and received[2]["ct"] == "application/json"
