// matrixgen page behaviour: the prefill chart and the copy button.
// Data comes from <script type="application/json"> blocks, never from inline
// code, so pages work under a Content-Security-Policy without 'unsafe-inline'.
(function () {
  "use strict";

  // draw renders the chart whose option sits in the JSON block <id>-option.
  function draw(data) {
    var target = document.getElementById(data.id.replace(/-option$/, ""));
    if (!target || target.getAttribute("data-drawn")) return;
    target.setAttribute("data-drawn", "1");
    var option = JSON.parse(data.textContent);
    var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
    if (dark) option.backgroundColor = "transparent";
    var shown = option;
    if (target.id === "index-chart") {
      target.hidden = false;
      shown = keepRuns(option, indexRuns || []);
      fitIndexChart(target, indexRuns || []);
    }
    var chart = echarts.init(target, dark ? "dark" : null, { renderer: "canvas" });
    chart.setOption(shown);
    drawn[target.id] = { chart: chart, option: option };
    window.addEventListener("resize", function () { chart.resize(); });
  }

  // The index chart shows the runs the filters leave, in the table's order.
  var drawn = {};
  var indexRuns = null;
  function keepRuns(option, ids) {
    var all = option.yAxis[0].data;
    var at = ids.map(function (id) { return all.indexOf(id); }).filter(function (i) { return i >= 0; });
    var o = JSON.parse(JSON.stringify(option));
    o.yAxis[0].data = at.map(function (i) { return all[i]; });
    o.series.forEach(function (s, k) { s.data = at.map(function (i) { return option.series[k].data[i]; }); });
    return o;
  }
  function fitIndexChart(target, ids) { target.style.height = (100 + 40 * Math.max(ids.length, 1)) + "px"; }
  function showIndexRuns(ids) {
    indexRuns = ids;
    var d = drawn["index-chart"];
    if (!d) return;
    var target = document.getElementById("index-chart");
    fitIndexChart(target, ids);
    d.chart.resize();
    d.chart.setOption(keepRuns(d.option, ids), true);
  }

  // readJSON parses the JSON block with this id, or gives null.
  function readJSON(id) {
    var data = document.getElementById(id);
    return data ? JSON.parse(data.textContent) : null;
  }

  function drawCharts() {
    if (typeof echarts === "undefined") return;
    document.querySelectorAll("script[type='application/json'][id$='-option']").forEach(draw);
  }

  // Cell details: the page carries every cell's detail as JSON; a matrix
  // cell's link (#cell-8K-16) shows it in the panel below the matrix. Every
  // value goes in as text, never as markup.
  var details = null;
  var detailChart = null;

  function el(tag, text, className) {
    var e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (className) e.className = className;
    return e;
  }

  // chartOption is a copy of the Go-built option of one of the cell panel's
  // charts (details.charts), for the chosen cell's data.
  function chartOption(name) { return JSON.parse(JSON.stringify(details.charts[name])); }

  // The GPUs' board power and mean SM clock through the window.
  var powerChart = null;
  function drawPower(d) {
    var chartEl = document.getElementById("cell-detail-power");
    if (!chartEl) return;
    chartEl.hidden = !(d.power && d.power.length && typeof echarts !== "undefined");
    if (chartEl.hidden) return;
    if (!powerChart) {
      var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
      powerChart = echarts.init(chartEl, dark ? "dark" : null, { renderer: "canvas" });
      window.addEventListener("resize", function () { powerChart.resize(); });
    }
    var option = chartOption("power");
    option.series[0].data = d.power.map(function (p) { return [p[0], p[1]]; });
    option.series[1].data = d.power.filter(function (p) { return p[2] !== null; }).map(function (p) { return [p[0], p[2]]; });
    powerChart.setOption(option, true);
    powerChart.resize();
  }

  function showCell() {
    var panel = document.getElementById("cell-detail");
    var data = document.getElementById("cell-details");
    if (!panel || !data) return;
    if (details === null) details = JSON.parse(data.textContent);
    var id = decodeURIComponent(location.hash.slice(1));
    var d = details.cells[id];
    // The selected cell is marked in the matrix, for the eye and for
    // screen readers alike.
    document.querySelectorAll("table.matrix a[aria-current]").forEach(function (a) { a.removeAttribute("aria-current"); });
    if (d) {
      var link = document.querySelector("table.matrix a[href='#" + id + "']");
      if (link) link.setAttribute("aria-current", "true");
    }
    if (!d) { panel.hidden = true; return; }
    panel.hidden = false;
    document.getElementById("cell-detail-heading").textContent = d.heading;
    document.getElementById("cell-detail-status").textContent = d.status + (d.reason ? " — " + d.reason : "");
    var dl = document.getElementById("cell-detail-figures");
    dl.replaceChildren();
    (d.figures || []).forEach(function (value, i) {
      if (!value) return;
      dl.appendChild(el("dt", details.labels[i]));
      dl.appendChild(el("dd", value));
    });
    var more = document.getElementById("cell-detail-more");
    more.replaceChildren();
    if (d.loop) {
      more.appendChild(el("p", "Repeated text from byte " + d.loop.start_offset + " of the output: “" + d.loop.unit + "”"));
      if (d.loop.excerpt) more.appendChild(el("pre", d.loop.excerpt, "excerpt"));
    }
    if (d.metrics && d.metrics.length) {
      var table = el("table", undefined, "metrics");
      var head = el("tr");
      ["At", "Running", "Waiting", "KV cache used", "Preemptions", "Draft acceptance"].forEach(function (h) { head.appendChild(el("th", h, "num")); });
      table.appendChild(el("thead")).appendChild(head);
      var body = table.appendChild(el("tbody"));
      d.metrics.forEach(function (m) {
        var tr = el("tr");
        m.forEach(function (v) { tr.appendChild(el("td", v, "num")); });
        body.appendChild(tr);
      });
      var wrap = el("div", undefined, "scroll");
      wrap.appendChild(table);
      more.appendChild(wrap);
    }
    var chartEl = document.getElementById("cell-detail-chart");
    chartEl.hidden = !(d.per_second && d.per_second.length && typeof echarts !== "undefined");
    if (!chartEl.hidden) {
      if (!detailChart) {
        var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
        detailChart = echarts.init(chartEl, dark ? "dark" : null, { renderer: "canvas" });
        window.addEventListener("resize", function () { detailChart.resize(); });
      }
      var option = chartOption("per_second");
      option.xAxis[0].data = d.per_second.map(function (_, i) { return i + 1; });
      option.series[0].data = d.per_second;
      detailChart.setOption(option, true);
      detailChart.resize();
    }
    drawPower(d);
    panel.scrollIntoView({ block: "nearest" });
  }

  function copyText(text, button) {
    var done = function () {
      var old = button.textContent;
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = old; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { selectFallback(text, done); });
    } else {
      selectFallback(text, done);
    }
  }

  // selectFallback copies where the Clipboard API is not offered (pages
  // opened from disk in some browsers).
  function selectFallback(text, done) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "offscreen";
    document.body.appendChild(area);
    area.select();
    try { if (document.execCommand("copy")) done(); } catch (e) { /* nothing else to try */ }
    document.body.removeChild(area);
  }

  function wireCopyButtons() {
    document.querySelectorAll("button[data-copy]").forEach(function (button) {
      button.addEventListener("click", function () {
        var source = document.getElementById(button.getAttribute("data-copy"));
        if (source) copyText(source.textContent, button);
      });
    });
  }

  // Index filters and sorting, kept in the address so a view can be
  // shared. Without the script the index is the plain, complete table.
  // markTops marks the best figure of each figure column among the rows
  // shown, as the built page marks it among all.
  function markTops(rows) {
    ["best", "peak", "perwatt"].forEach(function (k) {
      var top = null, best = 0;
      rows.forEach(function (r) {
        var v = parseFloat(r.dataset[k]);
        if (v > best) { best = v; top = r; }
      });
      rows.forEach(function (r) {
        var td = r.querySelector("td[data-top='" + k + "']");
        if (td) td.classList.toggle("top", r === top && rows.length > 1);
      });
    });
  }

  function wireFilters() {
    var form = document.getElementById("filters");
    var table = document.getElementById("runs");
    if (!form || !table) return;
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var params = new URLSearchParams(location.search);
    form.hidden = false;
    Array.prototype.forEach.call(form.elements, function (s) {
      if (s.name && params.has(s.name)) s.value = params.get(s.name);
    });
    function apply() {
      var shown = 0;
      var keep = new URLSearchParams();
      Array.prototype.forEach.call(form.elements, function (s) { if (s.name && s.value) keep.set(s.name, s.value); });
      rows.forEach(function (r) {
        var ok = ["gpu", "model", "engine", "quantization"].every(function (k) {
          var v = keep.get(k);
          return !v || r.dataset[k] === v;
        });
        r.hidden = !ok;
        if (ok) shown++;
      });
      var sort = keep.get("sort");
      var sorted = rows.slice();
      if (sort === "best" || sort === "peak") {
        sorted.sort(function (a, b) { return (parseFloat(b.dataset[sort]) || -1) - (parseFloat(a.dataset[sort]) || -1); });
      } else if (sort === "model" || sort === "gpu") {
        sorted.sort(function (a, b) { return a.dataset[sort].localeCompare(b.dataset[sort]); });
      }
      sorted.forEach(function (r) { body.appendChild(r); });
      markTops(rows.filter(function (r) { return !r.hidden; }));
      showIndexRuns(sorted.filter(function (r) { return !r.hidden; }).map(function (r) { return r.dataset.id; }));
      document.getElementById("filter-count").textContent = shown + " of " + rows.length + (rows.length === 1 ? " run" : " runs");
      var q = keep.toString();
      history.replaceState(null, "", location.pathname + (q ? "?" + q : "") + location.hash);
    }
    form.addEventListener("change", apply);
    apply();
  }

  // Under `matrixgen serve` pages carry <meta name="matrixgen-live">: poll
  // the build's version and reload when it changes.
  function liveReload() {
    var meta = document.querySelector("meta[name='matrixgen-live']");
    if (!meta || !window.fetch) return;
    var url = meta.getAttribute("content");
    var seen = null;
    setInterval(function () {
      fetch(url, { cache: "no-store" }).then(function (r) { return r.text(); }).then(function (v) {
        if (seen === null) seen = v;
        else if (v !== seen) location.reload();
      }).catch(function () { /* the server is restarting */ });
    }, 1000);
  }

  // compare.html?a=X&b=Y: compare any two runs from their run.json files.
  // The rules come from the Go side (#compare-rules): the script decides
  // nothing the built pages decide differently.
  var rules = readJSON("compare-rules") || { ratio_bins: [], status_labels: {}, figure_statuses: [], context_labels: {} };
  function shows(d) { return d && typeof d.total_tok_s === "number" && rules.figure_statuses.indexOf(d.status) >= 0; }
  function fmt1(v) { return v.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 }); }
  function ratioClass(r) {
    for (var i = 0; i < rules.ratio_bins.length; i++) {
      var b = rules.ratio_bins[i];
      if (b.below === null || r < b.below) return b.class;
    }
    return "";
  }
  function contextLabel(n) { return rules.context_labels[String(n)] || String(n); }
  function statusLabel(d) { return d ? rules.status_labels[d.status] || d.status : "not measured"; }

  function pickCompare() {
    var result = document.getElementById("pick-result");
    if (!result) return;
    var params = new URLSearchParams(location.search);
    var a = params.get("a"), b = params.get("b");
    var errorEl = document.getElementById("pick-error");
    function fail(msg) { errorEl.hidden = false; errorEl.textContent = msg; }
    if (!a || !b) { fail("Pick two runs on the index."); return; }
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(a) || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(b)) { fail("Those are not run ids."); return; }
    document.getElementById("pick-heading").textContent = a + " vs " + b;
    Promise.all([a, b].map(function (id) {
      return fetch("runs/" + id + "/run.json").then(function (r) {
        if (!r.ok) throw new Error("no run " + id);
        return r.json();
      });
    })).then(function (runs) {
      var ra = runs[0], rb = runs[1];
      var sides = document.getElementById("pick-sides");
      sides.replaceChildren();
      [[a, ra], [b, rb]].forEach(function (s, i) {
        var link = el("a", (i ? "B: " : "A: ") + s[1].model.name + " on " + (s[1].hardware.gpu || s[1].hardware.cpu || "?"));
        link.href = "runs/" + s[0] + "/index.html";
        sides.appendChild(link);
        sides.appendChild(document.createElement("br"));
      });
      var settings = document.getElementById("pick-settings");
      settings.replaceChildren();
      var head = el("tr");
      ["", "A · " + a, "B · " + b].forEach(function (h) { head.appendChild(el("th", h)); });
      settings.appendChild(el("thead")).appendChild(head);
      var sbody = settings.appendChild(el("tbody"));
      [["GPU", function (r) { return r.hardware.gpu; }], ["Model", function (r) { return r.model.name; }],
       ["Engine", function (r) { return r.engine.name; }], ["Version", function (r) { return r.engine.version; }],
       ["Quantization", function (r) { return r.engine.quantization; }],
       ["Benchmark tool", function (r) { return [r.tool.name, r.tool.version].filter(Boolean).join(" "); }]].forEach(function (row) {
        var va = row[1](ra) || "—", vb = row[1](rb) || "—";
        var tr = el("tr", undefined, va !== vb ? "differs" : "");
        tr.appendChild(el("th", row[0] + (va !== vb ? " (differs)" : "")));
        tr.appendChild(el("td", va));
        tr.appendChild(el("td", vb));
        sbody.appendChild(tr);
      });
      function cells(r) {
        var m = {};
        (r.decode || []).forEach(function (d) { m[d.context_tokens + "x" + d.concurrency] = d; });
        return m;
      }
      var ca = cells(ra), cb = cells(rb);
      function axis(key) {
        var s = {};
        (ra.decode || []).concat(rb.decode || []).forEach(function (d) { s[d[key]] = true; });
        return Object.keys(s).map(Number).sort(function (x, y) { return x - y; });
      }
      var contexts = axis("context_tokens"), levels = axis("concurrency");
      var table = document.getElementById("pick-ratio");
      table.replaceChildren();
      var hr = el("tr");
      hr.appendChild(el("th", "Context"));
      levels.forEach(function (n) { hr.appendChild(el("th", String(n))); });
      table.appendChild(el("thead")).appendChild(hr);
      var body = table.appendChild(el("tbody"));
      contexts.forEach(function (c) {
        var tr = el("tr");
        tr.appendChild(el("th", contextLabel(c)));
        levels.forEach(function (n) {
          var da = ca[c + "x" + n], db = cb[c + "x" + n];
          var td = el("td");
          if (shows(da) && shows(db) && da.total_tok_s > 0) {
            var r = db.total_tok_s / da.total_tok_s;
            td.className = ratioClass(r);
            td.appendChild(el("span", r.toFixed(2) + "×", "fig"));
            td.appendChild(el("span", fmt1(da.total_tok_s) + " → " + fmt1(db.total_tok_s), "ttft"));
          } else {
            // Quietly empty; what each run has there, on hover.
            td.className = "st-missing";
            td.title = contextLabel(c) + " × " + n + ": A " + statusLabel(da) + ", B " + statusLabel(db);
          }
          tr.appendChild(td);
        });
        body.appendChild(tr);
      });
      result.hidden = false;
    }).catch(function (e) { fail("Could not load the runs (" + e.message + "). Opened from disk, the browser may refuse to read them: serve the site, e.g. with matrixgen serve."); });
  }

  wireCopyButtons();
  wireFilters();
  pickCompare();

  // The index's Compare form: the pages' policy sends no form anywhere
  // (form-action 'none'), so the script goes to compare.html itself. B
  // starts on a run other than A.
  function comparePicker() {
    var form = document.querySelector("form.pick");
    if (!form) return;
    var b = form.querySelector("select[name=b]");
    if (b && b.options.length > 1 && b.selectedIndex === 0) b.selectedIndex = 1;
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var a = form.querySelector("select[name=a]").value;
      window.location.href = "compare.html?a=" + encodeURIComponent(a) + "&b=" + encodeURIComponent(b.value);
    });
  }
  comparePicker();

  // Matrix views: the same cells coloured by another figure (per-request
  // tok/s, TTFT, tok/s per watt, joules per 1K tokens), each on its own
  // scale, from the page's JSON block; the choice lives in the address.
  function matrixViews() {
    var data = document.getElementById("matrix-views");
    var picker = document.getElementById("matrix-views-picker");
    if (!data || !picker) return;
    var views = JSON.parse(data.textContent);
    var select = picker.querySelector("select");
    picker.hidden = false;
    function apply(name) {
      var view = views.filter(function (v) { return v.name === name; })[0] || views[0];
      select.value = view.name;
      document.querySelectorAll("table.matrix a.cell-link").forEach(function (a) {
        var id = a.getAttribute("href").replace(/^.*#/, "");
        var cell = view.cells[id];
        if (!cell) return;
        var td = a.parentElement;
        var fig = a.querySelector(".fig");
        if (fig) fig.textContent = cell[0];
        td.className = td.className.replace(/\bbin-\d+\b/g, "").trim();
        if (cell[1]) td.classList.add(cell[1]);
        var ttft = a.querySelector(".ttft");
        if (ttft) ttft.style.display = view.name === "total" ? "" : "none";
      });
      document.getElementById("legend-title").textContent = view.label;
      var bins = document.getElementById("legend-bins");
      bins.replaceChildren();
      view.legend.forEach(function (b) {
        var li = document.createElement("li");
        var sw = document.createElement("span");
        sw.className = "swatch " + b.Class;
        li.appendChild(sw);
        li.appendChild(document.createTextNode(b.Range));
        bins.appendChild(li);
      });
    }
    var params = new URLSearchParams(location.search);
    apply(params.get("view") || views[0].name);
    select.addEventListener("change", function () {
      var p = new URLSearchParams(location.search);
      if (select.value === views[0].name) p.delete("view"); else p.set("view", select.value);
      var q = p.toString();
      history.replaceState(null, "", location.pathname + (q ? "?" + q : "") + location.hash);
      apply(select.value);
    });
  }
  matrixViews();
  liveReload();
  drawCharts();
  showCell();
  window.addEventListener("hashchange", showCell);
})();
