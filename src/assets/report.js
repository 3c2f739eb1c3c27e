// hammer HTML report (src/hammer/stats/report/html.h): table sorting and chart hover values.
// Inlined into every report; no dependencies, works offline. Must not contain a closing script
// tag.
(function () {
  "use strict";
  var each = function (list, f) { Array.prototype.forEach.call(list, f); };

  // Sortable tables: numbers sort by each cell's data-v (rows without a value go last), text
  // by data-v or the cell's text. The first click sorts numbers descending, text ascending.
  function sortTable(table, index, th) {
    var numeric = th.getAttribute("data-type") === "num";
    var first = numeric ? "descending" : "ascending";
    var current = th.getAttribute("aria-sort");
    var order = current === first ? (numeric ? "ascending" : "descending") : first;
    var sign = order === "ascending" ? 1 : -1;
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var keyOf = function (row) {
      var cell = row.cells[index];
      var v = cell.hasAttribute("data-v") ? cell.getAttribute("data-v") : cell.textContent;
      if (!numeric) return v;
      return v === "" ? null : parseFloat(v);
    };
    var keyed = rows.map(function (row, i) { return { row: row, key: keyOf(row), i: i }; });
    keyed.sort(function (a, b) {
      if (a.key === null || b.key === null) {
        if (a.key === b.key) return a.i - b.i;
        return a.key === null ? 1 : -1;
      }
      if (a.key < b.key) return -sign;
      if (a.key > b.key) return sign;
      return a.i - b.i;
    });
    keyed.forEach(function (k) { body.appendChild(k.row); });
    each(th.parentNode.cells, function (c) { c.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", order);
  }
  // Hover values: the line charts carry their data in data-hover (pixel x of each point, its
  // label, and every series' values); the box lists the values at the nearest point.
  function format(v) {
    var a = Math.abs(v);
    if (a >= 1000) return Math.round(v).toLocaleString("en-US");
    if (a >= 100) return v.toFixed(0);
    if (a >= 10) return v.toFixed(1);
    if (a >= 1) return v.toFixed(2);
    return v.toPrecision(3);
  }
  function nearest(xs, x) {
    var lo = 0, hi = xs.length - 1;
    if (hi < 0) return -1;
    while (hi - lo > 1) {
      var mid = (lo + hi) >> 1;
      if (xs[mid] < x) lo = mid; else hi = mid;
    }
    return Math.abs(xs[lo] - x) <= Math.abs(xs[hi] - x) ? lo : hi;
  }
  function element(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // Sorting and hover values for the tables and charts under `root`.
  function init(root) {
    each(root.querySelectorAll("table.sortable"), function (table) {
      each(table.tHead.rows[0].cells, function (th, index) {
        th.tabIndex = 0;
        th.addEventListener("click", function () { sortTable(table, index, th); });
        th.addEventListener("keydown", function (e) {
          if (e.key === "Enter" || e.key === " ") {
            e.preventDefault();
            sortTable(table, index, th);
          }
        });
      });
    });

    each(root.querySelectorAll("figure.chart svg[data-hover]"), function (svg) {
      var data = JSON.parse(svg.getAttribute("data-hover"));
      var figure = svg.parentNode;
      var box = figure.querySelector(".hover");
      var cursor = svg.querySelector(".cursor");
      if (!box || !cursor) return;
      svg.addEventListener("mousemove", function (e) {
        var point = svg.createSVGPoint();
        point.x = e.clientX;
        point.y = e.clientY;
        var local = point.matrixTransform(svg.getScreenCTM().inverse());
        var i = nearest(data.px, local.x);
        if (i < 0) return;
        cursor.setAttribute("x1", data.px[i]);
        cursor.setAttribute("x2", data.px[i]);
        cursor.setAttribute("visibility", "visible");
        box.textContent = "";
        box.appendChild(element("div", "at", data.x[i]));
        data.s.forEach(function (s) {
          var v = s.v[i];
          if (v === null || v === undefined) return;
          var row = element("div", "row");
          var name = element("span", "name");
          var swatch = element("span", "swatch");
          swatch.style.setProperty("--c", s.c);
          name.appendChild(swatch);
          name.appendChild(document.createTextNode(s.n));
          row.appendChild(name);
          row.appendChild(element("span", "num", format(v) + " " + data.u));
          box.appendChild(row);
        });
        box.hidden = false;
        var frame = figure.getBoundingClientRect();
        var left = e.clientX - frame.left + 14;
        if (left + box.offsetWidth > frame.width) left = e.clientX - frame.left - box.offsetWidth - 14;
        box.style.left = Math.max(0, left) + "px";
        box.style.top = Math.max(0, e.clientY - frame.top - box.offsetHeight / 2) + "px";
      });
      svg.addEventListener("mouseleave", function () {
        box.hidden = true;
        cursor.setAttribute("visibility", "hidden");
      });
    });
  }

  init(document);
  // The live dashboard (dashboard.js) runs it again over each <main> it puts in place.
  window.hammerReport = init;
  document.body.dataset.ready = "1";
})();
