// hammer load --dashboard (src/hammer/load/load_dashboard.h): follows the run's Server-Sent
// Events stream. Inlined after report.js into the live page only; no dependencies, works
// offline. Must not contain a closing script tag.
//   "update": {"seq", "running", "elapsed_seconds", "requests", "succeeded", "failed", "rps",
//              "p50_ms", "p99_ms", "in_flight", "main"}: `main` (the report's <main>, rendered
//              by hammer) takes the place of the page's, and report.js's behaviours are set up
//              on it again;
//   "done":    {"html"}: the final report, the page --html writes, becomes the document.
// The body's data-seq counts the updates shown and data-live says "running", "done" or
// "lost" (the stream broke before its end; the browser reconnects by itself).
(function () {
  "use strict";
  var body = document.body;
  if (!window.EventSource || !body.dataset.events) return;
  var source = new EventSource(body.dataset.events);
  body.dataset.live = "running";
  source.addEventListener("update", function (e) {
    var update = JSON.parse(e.data);
    var old = document.querySelector("main");
    var holder = document.createElement("div");
    holder.innerHTML = update.main;
    var main = holder.querySelector("main");
    if (!old || !main) return;
    old.parentNode.replaceChild(main, old);
    window.hammerReport(main);
    body.dataset.seq = String(update.seq);
    body.dataset.live = "running";
  });
  source.addEventListener("done", function (e) {
    source.close();
    var done = JSON.parse(e.data);
    document.open();
    document.write(done.html);
    document.close();
  });
  source.addEventListener("error", function () {
    if (body.dataset.live === "running") body.dataset.live = "lost";
  });
})();
