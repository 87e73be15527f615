// matrixgen page behaviour: the prefill chart and the copy button.
// Data comes from <script type="application/json"> blocks, never from inline
// code, so pages work under a Content-Security-Policy without 'unsafe-inline'.
(function () {
  "use strict";

  // Text from outside the page (an address, a hash, a run's values) is
  // never a key read from a plain object, where "__proto__" or
  // "constructor" finds what the object inherits: every such lookup is
  // own(), every map built here dict(), and every decoding decode(),
  // which gives "" for a malformed % escape instead of throwing.
  function dict() { return Object.create(null); }
  function own(o, k) { return o && Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined; }
  function decode(s) { try { return decodeURIComponent(s); } catch (e) { return ""; } }

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
      target.hidden = !!indexView && indexView.shown.length === 0;
      shown = indexOption(option);
      fitIndexChart(target, option);
    }
    var chart = echarts.init(target, dark ? "dark" : null, { renderer: "canvas" });
    chart.setOption(shown);
    drawn[target.id] = { chart: chart, option: option };
    window.addEventListener("resize", function () { chart.resize(); });
  }

  // The index chart shows, below the table, the fastest of the runs the
  // table's view holds (index.go's indexChart, at most ten, by peak total
  // tok/s): the page's as the build drew them, or of a filtered or sorted
  // view (indexView), each bar labelled as the build labels them, and its
  // aria-label says what it shows, as the build's does.
  var drawn = dict();
  var indexView = null, builtLabel = null;
  function fastest(summaries) {
    var peak = function (s) { var v = parseFloat(s[S.peak]); return v > 0 ? v : -1; };
    return summaries.map(function (s, i) { return [s, i]; }).sort(function (x, y) { return peak(y[0]) - peak(x[0]) || x[1] - y[1]; })
      .slice(0, 10).map(function (x) { return x[0]; });
  }
  function chartLabel(shown, of) {
    var head = "Best single-stream and peak total tok/s of the " + (of === 1 ? "run listed: " : shown.length === of ? of.toLocaleString("en-US") + " runs listed, fastest first: " :
      shown.length + " fastest of the " + of.toLocaleString("en-US") + " runs listed: ");
    return head + shown.map(function (s) { return s[S.id] + ": " + (s[S.bestText] || "\u2014") + " single-stream, " + (s[S.peakText] || "\u2014") + " peak tok/s"; }).join("; ");
  }
  function summariesOption(option, summaries) {
    var o = JSON.parse(JSON.stringify(option));
    o.yAxis[0].data = summaries.map(function (s) { return s[S.id]; });
    [[S.best, S.bestText], [S.peak, S.peakText]].forEach(function (f, k) {
      var style = (option.series[k].data.filter(function (d) { return d.label; })[0] || {}).label || { show: true, position: "right" };
      o.series[k].data = summaries.map(function (s) {
        var v = parseFloat(s[f[0]]);
        return v > 0 ? { value: v, label: Object.assign({}, style, { formatter: s[f[1]] }) } : { value: "-" };
      });
    });
    return o;
  }
  function indexOption(option) {
    return indexView ? summariesOption(option, indexView.shown) : option;
  }
  function fitIndexChart(target, option) {
    var n = indexView ? indexView.shown.length : option.yAxis[0].data.length;
    target.style.height = (90 + 30 * Math.max(n, 1)) + "px";
    if (builtLabel === null) builtLabel = target.getAttribute("aria-label");
    target.setAttribute("aria-label", indexView ? chartLabel(indexView.shown, indexView.of) : builtLabel);
  }
  // showIndexRuns draws the fastest of a view's runs (of matching in
  // all), or the page's as built (summaries null); a view of no run has
  // no chart.
  function showIndexRuns(summaries, of) {
    indexView = summaries ? { shown: fastest(summaries), of: of } : null;
    var d = drawn["index-chart"], target = document.getElementById("index-chart");
    if (target && d) target.hidden = !!summaries && summaries.length === 0;
    if (!d || target.hidden) return;
    fitIndexChart(document.getElementById("index-chart"), d.option);
    d.chart.resize();
    d.chart.setOption(indexOption(d.option), true);
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
    var id = decode(location.hash.slice(1));
    var d = own(details.cells, id);
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

  // The index is pages of runs, newest first, each a plain table that
  // needs no script. The files are numbered from the oldest (index-1.html
  // holds the oldest runs; the newest page, which holds what is left, is
  // index.html), so a run added changes one page; what every page shows
  // of the whole site (how many runs, each filter's values) comes from
  // assets/index/site.js (index.go's indexSite), and the pages are shown
  // numbered from the newest: ?p=1 is index.html. A filter or a sort
  // reaches every run: the runs' summaries come in chunks
  // (assets/index/chunk-0001.js, …, also from the oldest), scripts that
  // each hand theirs to matrixgenIndexChunk (a script loads from file://,
  // where fetch is refused), loaded once a filter or a sort is chosen. The
  // rows of such a view are made here, as the build writes a page's, every
  // value as text. The view lives in the address (?gpu=…&sort=…&p=2) so
  // it can be shared.
  // S names a summary's fields, in the order index.go's indexChunk writes them.
  var S = { id: 0, model: 1, gpu: 2, engine: 3, engineName: 4, quantization: 5, date: 6, bestText: 7, peakText: 8,
    perWattText: 9, best: 10, peak: 11, perwatt: 9, simulated: 12 };
  var filterFields = { gpu: S.gpu, model: S.model, engine: S.engineName, quantization: S.quantization };

  // markTops marks the best figure of each figure column among the rows
  // shown: the one place the index's best marks are decided. A simulated
  // run's figures are the sim's settings, not hardware's: it is ranked
  // only where every run shown is one.
  function markTops(rows) {
    var ranked = rows.filter(function (r) { return !r.hasAttribute("data-simulated"); });
    if (ranked.length === 0) ranked = rows;
    ["best", "peak", "perwatt"].forEach(function (k) {
      var top = null, best = 0;
      ranked.forEach(function (r) {
        var v = parseFloat(r.dataset[k]);
        if (v > best) { best = v; top = r; }
      });
      rows.forEach(function (r) {
        var td = r.querySelector("td[data-top='" + k + "']");
        if (td) td.classList.toggle("top", r === top && ranked.length > 1);
      });
    });
  }

  // loadScripts loads scripts that each hand their part to window[global]
  // (a script loads from file://, where fetch is refused) and calls then
  // with the parts in order once all have come, at once if they have;
  // slot(arguments) tells which part a call is, -1 for none. Every caller
  // waiting is answered, in order: the last is the view chosen last.
  var loads = dict();
  function loadScripts(key, srcs, global, slot, then, fail) {
    var l = own(loads, key);
    if (l && l.parts) return then(l.parts);
    if (l) return l.waiting.push([then, fail]);
    l = loads[key] = { parts: null, waiting: [[then, fail]] };
    var parts = new Array(srcs.length), left = srcs.length;
    function done() {
      l.parts = parts;
      l.waiting.splice(0).forEach(function (w) { w[0](parts); });
    }
    window[global] = function () {
      var at = slot(arguments);
      if (at < 0 || at >= srcs.length || parts[at] !== undefined) return;
      parts[at] = arguments[arguments.length - 1];
      if (--left === 0) done();
    };
    if (left === 0) return done();
    srcs.forEach(function (src) {
      var script = document.createElement("script");
      script.src = src;
      script.onerror = function () {
        delete loads[key];
        l.waiting.splice(0).forEach(function (w) { if (w[1]) w[1](src); });
      };
      document.head.appendChild(script);
    });
  }

  // withSite calls then with what the index's site.js says of the whole
  // site (index.go's indexSite), the page's data (index-data) beside it.
  function withSite(then, fail) {
    var data = readJSON("index-data");
    if (!data || typeof data.site !== "string") return;
    loadScripts("site", [data.site], "matrixgenIndexSite", function () { return 0; }, function (parts) {
      then(parts[0], data);
    }, fail);
  }

  // withSummaries calls then with every run's summary, in the index's
  // order, newest first: the chunks are numbered from the oldest, each
  // newest first.
  function withSummaries(site, then, fail) {
    var srcs = [];
    for (var n = 1; n <= site.chunks; n++) srcs.push("assets/index/chunk-" + String(n).padStart(4, "0") + ".js");
    loadScripts("summaries", srcs, "matrixgenIndexChunk", function (a) { return a[0] - 1; }, function (parts) {
      then(parts.summaries || (parts.summaries = [].concat.apply([], parts.slice().reverse())));
    }, fail);
  }

  // withValues calls then with every filter's values, each [filter, value,
  // runs], the most frequent of each filter first, from the values scripts
  // (index.go's indexValues, in the order their first runs came): loaded
  // only when a reader looks for a value.
  function withValues(site, then, fail) {
    var srcs = [], at = dict();
    site.filters.forEach(function (f) {
      for (var n = 1; n <= f.chunks; n++) {
        at[f.name + " " + n] = srcs.length;
        srcs.push("assets/index/values-" + f.name + "-" + String(n).padStart(4, "0") + ".js");
      }
    });
    loadScripts("values", srcs, "matrixgenIndexValues", function (a) { var i = own(at, a[0] + " " + a[1]); return i === undefined ? -1 : i; }, function (parts) {
      if (!parts.all) {
        parts.all = [];
        var i = 0;
        site.filters.forEach(function (f) {
          var values = [];
          for (var n = 1; n <= f.chunks; n++, i++) parts[i].forEach(function (v) { values.push([f, v[0], v[1]]); });
          values.sort(function (x, y) { return y[2] - x[2] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0); });
          parts.all = parts.all.concat(values);
        });
      }
      then(parts.all);
    }, fail);
  }

  // same says whether a run's value is the one chosen: compared as the
  // page's HTML gives values (a NUL read as U+FFFD, line ends as \n), so
  // a value from the address, from an option or from a chunk is one.
  function htmlValue(v) { return String(v).replace(/\r\n?/g, "\n").replace(/\0/g, "\uFFFD"); }
  function same(a, b) { return htmlValue(a) === htmlValue(b); }

  // contains says whether a summary's id, model, GPU, engine or
  // quantization holds the text, whatever its case.
  function contains(s, text) {
    text = text.toLowerCase();
    return [S.id, S.model, S.gpu, S.engine, S.quantization].some(function (f) { return String(s[f]).toLowerCase().indexOf(text) >= 0; });
  }

  function runsText(n) { return n.toLocaleString("en-US") + (n === 1 ? " run" : " runs"); }

  // runRow is a summary's row of the table, as index.html's rows
  // writes it.
  function runRow(s, efficiency) {
    var tr = document.createElement("tr");
    [["id", S.id], ["model", S.model], ["gpu", S.gpu], ["engine", S.engineName], ["quantization", S.quantization],
      ["best", S.best], ["peak", S.peak], ["perwatt", S.perwatt], ["date", S.date]].forEach(function (d) {
      tr.setAttribute("data-" + d[0], s[d[1]]);
    });
    var model = el("td", undefined, "model"), link = el("a", s[S.model]);
    link.setAttribute("href", "runs/" + s[S.id] + "/index.html");
    model.appendChild(link);
    if (s[S.simulated]) {
      tr.setAttribute("data-simulated", "");
      model.appendChild(document.createTextNode(" "));
      model.appendChild(el("span", "simulated", "badge"));
    }
    model.appendChild(el("span", s[S.id], "run-id"));
    tr.appendChild(model);
    function cell(label, text, className, top) {
      var td = document.createElement("td");
      td.setAttribute("data-label", label);
      if (className) td.className = className;
      if (top) td.setAttribute("data-top", top);
      td.textContent = text;
      tr.appendChild(td);
    }
    cell("GPU", s[S.gpu]);
    cell("Engine", s[S.engine], "engine");
    cell("Quantization", s[S.quantization]);
    cell("Date", s[S.date], "date");
    cell("Best single-stream tok/s", s[S.bestText], "num figure", "best");
    cell("Peak total tok/s", s[S.peakText], "num figure", "peak");
    if (efficiency) cell("Best tok/s per watt", s[S.perWattText] || "\u2014", "num figure", "perwatt");
    return tr;
  }

  // pagerNumbers are the page numbers a pager shows: the first, the last
  // and two each side of page, a 0 where numbers are left out.
  function pagerNumbers(page, pages) {
    var out = [];
    for (var n = 1; n <= pages; n++) {
      if (n === 1 || n === pages || n >= page - 2 && n <= page + 2) {
        if (out.length && out[out.length - 1] !== n - 1) out.push(0);
        out.push(n);
      }
    }
    return out;
  }

  // wireIndex makes the index's filters, sort and pagers work once site.js
  // has come; until then, or if it cannot load, the page is as built.
  function wireIndex(offerRuns) {
    var form = document.getElementById("filters");
    var table = document.getElementById("runs");
    if (!form || !table) return;
    withSite(function (site, data) { wireIndexPage(site, data, form, table, offerRuns); });
  }

  function wireIndexPage(site, data, form, table, offerRuns) {
    var body = table.tBodies[0];
    var pageRows = Array.prototype.slice.call(body.rows);
    // The pagers above and below the table.
    var pagers = Array.prototype.slice.call(document.querySelectorAll("nav.pager"));
    var count = document.getElementById("filter-count");
    // The page's comparisons are of its own runs: a view hides them.
    var comparisons = document.querySelector("ul.compare-list");
    var perPage = site.page_runs;
    // A reader's pages are numbered from the newest, the files from the
    // oldest; the newest page holds what is left after full pages.
    var pages = Math.max(1, Math.ceil(site.runs / perPage));
    var here = Math.min(Math.max(1, pages - data.page + 1), pages);
    var newest = site.runs - (pages - 1) * perPage;
    function fileOf(n) {
      var k = pages - n + 1;
      return k === pages ? "index.html" : "index-" + k + ".html";
    }
    // Each filter's box lists its most frequent values, with their runs.
    site.filters.forEach(function (f) {
      Array.prototype.forEach.call(form.elements, function (s) {
        if (s.tagName !== "SELECT" || s.name !== f.name) return;
        f.shown.forEach(function (v) {
          var o = el("option", v[0] + " (" + Number(v[1]).toLocaleString("en-US") + ")");
          o.value = v[0];
          s.appendChild(o);
        });
      });
    });
    form.hidden = false;
    // setForm shows the address's view in the form. A filter's value the
    // page does not list (it lists each filter's most frequent) is added
    // to its box, so the reader sees what is chosen; showView says when
    // no run has it.
    function setForm(params) {
      Array.prototype.forEach.call(form.elements, function (s) {
        if (!s.name) return;
        var v = params.get(s.name) || "";
        if (s.tagName === "SELECT") {
          var listed = Array.prototype.some.call(s.options, function (o) { return o.value === v; });
          if (!listed && own(filterFields, s.name) !== undefined) {
            var o = el("option", v);
            o.value = v;
            s.appendChild(o);
          } else if (!listed) v = "";
        }
        s.value = v;
      });
    }
    function chosen() {
      var keep = new URLSearchParams();
      Array.prototype.forEach.call(form.elements, function (s) { if (s.name && s.value) keep.set(s.name, s.value); });
      return keep;
    }
    function query(keep, page) {
      var q = new URLSearchParams(keep);
      if (page > 1) q.set("p", page);
      q = q.toString();
      return q ? "?" + q : "";
    }
    // pageOf is the page an address names (?p=3), else this file's.
    function pageOf(params) {
      var p = parseInt(params.get("p"), 10);
      return p >= 1 ? p : here;
    }
    // go records a view in the address: "push" so Back returns to the one
    // before, "replace" where the address only catches up.
    function go(how, address) {
      if (how === "push" && address !== location.pathname + location.search + location.hash) history.pushState(null, "", address);
      else if (how !== "none") history.replaceState(null, "", address);
    }
    function apply(page, how) {
      var keep = chosen();
      if (!keep.toString()) {
        // No filter: the pages as built. Another page is its own file.
        page = Math.min(Math.max(1, page), pages);
        if (page !== here) return location.replace(fileOf(page));
        go(how, location.pathname + location.hash);
        return showPage();
      }
      go(how, location.pathname + query(keep, page) + location.hash);
      count.textContent = "loading " + runsText(site.runs) + "…";
      withSummaries(site, function (all) { showView(all, keep, page); }, function (src) {
        count.textContent = "could not load " + src;
      });
    }
    // showPage is the page as built: its own runs, newest first, its pager
    // numbered, each number the page's file.
    function showPage() {
      table.hidden = false;
      body.replaceChildren.apply(body, pageRows);
      var first = here === 1 ? 1 : newest + (here - 2) * perPage + 1;
      pagers.forEach(function (pager) { drawPager(pager, here, pages, first, first + pageRows.length - 1, site.runs, fileOf, false); });
      markTops(pageRows);
      showIndexRuns(null, 0);
      count.textContent = runsText(site.runs);
      if (comparisons) comparisons.hidden = false;
      offerRuns(null);
    }
    // showView is every run the filters leave, sorted, a page of them.
    function showView(all, keep, page) {
      var text = keep.get("q") || "";
      var match = all.filter(function (s) {
        return Object.keys(filterFields).every(function (k) { var v = keep.get(k); return !v || same(s[filterFields[k]], v); }) &&
          (!text || contains(s, text));
      });
      var sort = keep.get("sort");
      if (sort === "best" || sort === "peak") {
        match.sort(function (a, b) { return (parseFloat(b[S[sort]]) || -1) - (parseFloat(a[S[sort]]) || -1); });
      } else if (sort === "model" || sort === "gpu") {
        var collate = new Intl.Collator().compare;
        match.sort(function (a, b) { return collate(a[S[sort]], b[S[sort]]); });
      } else if (sort === "oldest") {
        match.reverse();
      }
      var pages = Math.max(1, Math.ceil(match.length / perPage));
      page = Math.min(Math.max(1, page), pages);
      var shown = match.slice((page - 1) * perPage, page * perPage);
      var rows = shown.map(function (s) { return runRow(s, site.efficiency); });
      // A view of no run has no table: the count says why.
      table.hidden = rows.length === 0;
      body.replaceChildren.apply(body, rows);
      pagers.forEach(function (pager) {
        drawPager(pager, page, pages, (page - 1) * perPage + 1, (page - 1) * perPage + shown.length, match.length,
          function (k) { return query(keep, k) || "?"; }, true);
      });
      markTops(rows);
      showIndexRuns(shown, shown.length);
      // A value no run has is said, not dropped: the address may be old
      // or mistyped.
      var none = site.filters.filter(function (f) {
        var v = keep.get(f.name);
        return v && !all.some(function (s) { return same(s[filterFields[f.name]], v); });
      }).map(function (f) { return "no run has " + f.label.toLowerCase() + " “" + keep.get(f.name) + "”"; });
      count.textContent = match.length.toLocaleString("en-US") + " of " + runsText(site.runs) + (none.length ? ": " + none.join("; ") : "");
      history.replaceState(null, "", location.pathname + query(keep, page) + location.hash);
      if (comparisons) comparisons.hidden = true;
      offerRuns(shown);
    }
    // drawPager writes a pager: the runs it shows (first to last of
    // total), newer and older, the first and the last page and two each
    // side of this one, each linked by href(page); a view's links carry
    // their page (data-page), which the script shows without leaving the
    // file. Hidden where there is one page.
    function drawPager(pager, page, pages, first, last, total, href, view) {
      pager.hidden = pages < 2;
      var parts = [el("span", "Runs " + first.toLocaleString("en-US") + "\u2013" + last.toLocaleString("en-US") + " of " +
        total.toLocaleString("en-US"), "range")];
      function link(to, text, rel) {
        var a = el("a", text);
        a.setAttribute("href", href(to));
        if (rel) a.setAttribute("rel", rel);
        if (view) a.setAttribute("data-page", to);
        parts.push(a);
      }
      if (page > 1) link(page - 1, "\u2190 Newer", "prev");
      pagerNumbers(page, pages).forEach(function (k) {
        if (k === 0) return parts.push(el("span", "\u2026", "gap"));
        if (k !== page) return link(k, String(k));
        var at = el("span", String(k));
        at.setAttribute("aria-current", "page");
        parts.push(at);
      });
      if (page < pages) link(page + 1, "Older \u2192", "next");
      pager.replaceChildren();
      parts.forEach(function (p, i) {
        if (i) pager.appendChild(document.createTextNode(" "));
        pager.appendChild(p);
      });
    }
    pagers.forEach(function (pager) {
      pager.addEventListener("click", function (ev) {
        var a = ev.target.closest && ev.target.closest("a[data-page]");
        if (!a) return;
        ev.preventDefault();
        apply(parseInt(a.getAttribute("data-page"), 10), "push");
        pagers[0].scrollIntoView();
      });
    });
    form.addEventListener("change", function () { apply(1, "push"); });
    // The contains field filters as it is typed, and offers the values of
    // every filter that hold what it says, with their runs, from the
    // values scripts, loaded the first time it is used.
    var q = form.elements.q, list = document.getElementById("filter-values"), typing = null;
    if (q && list) {
      q.addEventListener("input", function () {
        clearTimeout(typing);
        typing = setTimeout(function () {
          apply(1, "replace");
          var text = q.value.toLowerCase();
          if (!text) return list.replaceChildren();
          withValues(site, function (values) {
            if (q.value.toLowerCase() !== text) return;
            list.replaceChildren.apply(list, values.filter(function (v) { return String(v[1]).toLowerCase().indexOf(text) >= 0; }).slice(0, 30).map(function (v) {
              var o = el("option");
              o.value = v[1];
              o.label = v[0].label + " · " + runsText(v[2]);
              return o;
            }));
          });
        }, 250);
      });
    }
    window.addEventListener("popstate", function () {
      var params = new URLSearchParams(location.search);
      setForm(params);
      apply(pageOf(params), "none");
    });
    var params = new URLSearchParams(location.search);
    setForm(params);
    apply(pageOf(params), "replace");
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

  // Compare pages, built (compare/<a>--<b>/) or any two runs
  // (compare.html?a=…&b=…): one drawing of a pair from the two runs'
  // runs/<id>/compare.js, each a script that adds its run, every figure
  // formatted by the build, to window.matrixgenRuns (a script loads from
  // file://, where fetch is refused). The ratio bins and the chart's option
  // come from the page's #compare-rules: this only pairs, divides and draws.
  function comparePage() {
    var section = document.getElementById("compare");
    if (!section) return;
    var ids = [section.getAttribute("data-a"), section.getAttribute("data-b")];
    if (!ids[0]) {
      var params = new URLSearchParams(location.search);
      ids = [params.get("a"), params.get("b")];
    }
    var errorEl = document.getElementById("compare-error");
    function fail(msg) {
      var back = el("a", "Compare two runs on the index");
      back.href = section.getAttribute("data-root") + "index.html";
      errorEl.hidden = false;
      errorEl.replaceChildren(msg + " ", back, ".");
    }
    if (!ids[0] || !ids[1]) return fail("Pick two runs on the index.");
    if (!ids.every(function (id) { return /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(id) && id.indexOf("..") < 0; })) return fail("Those are not run ids.");
    if (ids[0] === ids[1]) return fail("That is one run twice: pick two runs on the index.");
    var root = section.getAttribute("data-root");
    var left = 2;
    ids.forEach(function (id) {
      var script = document.createElement("script");
      script.src = root + "runs/" + id + "/compare.js";
      script.onload = function () {
        if (--left === 0) drawComparison(section, root, readJSON("compare-rules"), own(window.matrixgenRuns, ids[0]), own(window.matrixgenRuns, ids[1]));
      };
      script.onerror = function () { fail("This site has no run " + id + "."); };
      document.body.appendChild(script);
    });
  }

  // setupLabels are the settings that make two runs different setups.
  var setupLabels = ["Model", "GPU", "VRAM", "Engine", "Version", "Quantization"];

  function drawComparison(section, root, rules, a, b) {
    var sides = [["A", a], ["B", b]];
    document.getElementById("compare-heading").textContent = a.id + " vs " + b.id;
    sides.forEach(function (s) {
      var p = document.getElementById("compare-side-" + s[0].toLowerCase());
      var link = el("a", s[1].id);
      link.href = root + "runs/" + s[1].id + "/index.html";
      p.replaceChildren(s[0] + ": ", link, " · " + s[1].title + (s[1].date ? " · " + s[1].date : ""));
      if (s[1].simulated) p.append(" ", el("span", "simulated", "badge"));
    });
    var simulated = sides.filter(function (s) { return s[1].simulated; }).map(function (s) { return s[0]; });
    var flag = document.getElementById("compare-simulated");
    flag.hidden = !simulated.length;
    flag.textContent = "Simulated: " + (simulated.length === 2 ? "both runs were" : "run " + simulated[0] + " was") +
      " measured against matrixgen sim, a loopback server of known speed, not real hardware.";

    var incomplete = sides.filter(function (s) { return s[1].incomplete; }).map(function (s) { return s[0]; });
    var stopped = document.getElementById("compare-incomplete");
    stopped.hidden = !incomplete.length;
    stopped.textContent = "Incomplete: " + (incomplete.length === 2 ? "both runs" : "run " + incomplete[0]) +
      " stopped before the sweep finished; a cell not reached reads Not run, and the headline figures cover only what was measured.";

    var heads = ["", "A · " + a.id, "B · " + b.id];
    var settings = byLabel(b.settings);
    // Runs of another model, GPU or engine are compared all the same, as
    // the compare command does, with the differences named up front.
    var unlike = a.settings.filter(function (s) {
      return setupLabels.indexOf(s.label) >= 0 && (s.text || "") !== (settings[s.label] || "");
    }).map(function (s) { return s.label; });
    var contextsOf = function (r) { return sortedKeys(r.cells.reduce(function (o, c) { o[c.context] = true; return o; }, dict())).join(" "); };
    if (contextsOf(a) !== contextsOf(b)) unlike.push("contexts");
    var unlikeFlag = document.getElementById("compare-unlike");
    unlikeFlag.hidden = !unlike.length;
    unlikeFlag.textContent = "Different setups: A and B differ in " + unlike.join(", ") + " (marked below); compared all the same.";
    table("compare-settings", heads, a.settings.filter(function (s) { return s.text || settings[s.label]; }).map(function (s) {
      var vb = settings[s.label] || "", differs = s.text !== vb;
      var th = el("th", s.label);
      if (differs) th.append(" ", el("span", "differs", "badge"));
      return { className: differs ? "differs" : "", cells: [th, el("td", s.text || "—"), el("td", vb || "—")] };
    }));
    drawLaunch(a, b);

    // The tables below name the runs by letter only: the lines above say
    // which is which, and ids in a head would widen a phone's table.
    var headline = byLabel(b.headline, true);
    table("compare-headline", ["", "A", "B", "B / A"], a.headline.map(function (f) {
      var g = headline[f.label] || { text: "—" };
      return { cells: [el("th", f.label)].concat(ranked(f, g, rules, false)) };
    }));

    var prefillShown = a.prefill.length + b.prefill.length > 0;
    document.getElementById("compare-prefill").hidden = !prefillShown;
    if (prefillShown) drawComparePrefill(rules, a, b);

    var cells = [dict(), dict()], contexts = dict(), levels = dict();
    [a, b].forEach(function (r, i) {
      r.cells.forEach(function (c) {
        cells[i][c.context + "x" + c.concurrency] = c;
        contexts[c.context] = c.label;
        levels[c.concurrency] = true;
      });
    });
    var columns = sortedKeys(levels);
    table("compare-ratio", ["Context"].concat(columns), sortedKeys(contexts).map(function (c) {
      var th = el("th", contexts[c]);
      th.setAttribute("data-context", c);
      return { cells: [th].concat(columns.map(function (n) {
        var ca = cells[0][c + "x" + n], cb = cells[1][c + "x" + n];
        var r = ratio(ca && ca.total_tok_s, cb && cb.total_tok_s, rules);
        if (r) return ratioCell(contexts[c] + " × " + n, ca, cb, r, rules.test);
        // No ratio: the cell says what the run without a figure has there
        // (B Error, B Not run; — where a run has no such cell), and a cell
        // A measured that B lost stands out: it fails the command's gate.
        var lost = ca && cb && ca.total_tok_s && !cb.total_tok_s;
        var said = !ca || !cb ? "—" : ca.total_tok_s ? "B " + cb.text : cb.total_tok_s ? "A " + ca.text :
          ca.text === cb.text ? ca.text : "A " + ca.text + ", B " + cb.text;
        var quiet = spans(lost ? "st-missing st-lost" : "st-missing", [[said, "st"]]);
        quiet.title = contexts[c] + " × " + n + ": A " + (ca ? ca.text : "not measured") + ", B " + (cb ? cb.text : "not measured") +
          (lost ? "; lost in B: compare -fail-on fails on it" : "");
        return quiet;
      })) };
    }));
    var legend = document.getElementById("compare-ratio-legend");
    legend.replaceChildren();
    rules.ratio_bins.forEach(function (bin) { legend.appendChild(el("li")).append(el("span", undefined, "swatch " + bin.class), bin.label); });
    legend.appendChild(el("li")).append(el("span", undefined, "swatch ratio-2 sig-loss"), "0.95–1.05×, a significant loss");
    legend.appendChild(el("li")).append(el("span", undefined, "swatch ratio-2 sig-gain"), "0.95–1.05×, a significant gain");
    legend.appendChild(el("li")).append(el("span", "≠", "swatch mark-differs"), "differs, p < " + rules.test.alpha + " for the cell on its own: Student's t over the repeats where both runs have " +
      rules.test.min_repeats + " or more, else two-sided Mann–Whitney U over the seconds");
    legend.appendChild(el("li")).append(el("span", "~", "swatch ratio-same"), "tested, not significant; ~ (against): significant the other way from the ratio, neither a gain nor a loss");
    legend.appendChild(el("li")).append(el("span", undefined, "swatch ratio-untested"), "untested: no test could be made, too few samples to ever reach p < " + rules.test.alpha +
      " (uncoloured), or a run kept none (other tools' runs: coloured as measured)");
    legend.appendChild(el("li")).append(el("span", undefined, "swatch ratio-none"), "requests queued: not marked");
    legend.appendChild(el("li")).append("Not on this page: the command line's matrixgen compare -fail-on adds a gate (Holm) column, where ! fails the gate; " +
      "* significant after Holm's correction; blank, tested but not significant after it; – untested, outside the family it corrects over, never failing the gate");
    section.hidden = false;
  }

  // ratioCell is a decode cell both runs have a figure for: its ratio
  // coloured as a gain or a loss only where the difference is significant
  // (repeatsTest where both runs have test.min_repeats repeats or more,
  // otherwise significance over the seconds), "~" where it was tested and
  // is not, "~ (against)" where it is but the other way from the ratio,
  // "untested" and uncoloured where its samples are too few to test; a
  // cell whose requests queued in either run is never marked; a pair where
  // a run kept no per-second samples (and not the repeats to test) is
  // untested and keeps its ratio's colour. data-verdict says which: gain,
  // loss, same, against, unmarked or untested.
  function ratioCell(name, ca, cb, r, test) {
    var figures = ca.text + " → " + cb.text, verdict, td, s;
    var byRepeats = !ca.status && !cb.status && ca.repeats && cb.repeats &&
      ca.repeats.length >= test.min_repeats && cb.repeats.length >= test.min_repeats;
    if (ca.status || cb.status) {
      verdict = "unmarked";
      td = spans("ratio-none", [[r.text, "fig"], [figures, "ttft"], [ca.status && cb.status ? "both queued" : ca.status ? "A queued" : "B queued", "st"]]);
      td.title = name + ": " + [["A", ca], ["B", cb]].filter(function (s) { return s[1].status; }).map(function (s) { return s[0] + " " + s[1].status; }).join(", ") +
        "; not marked as a gain or a loss";
    } else if (!byRepeats && (!ca.seconds || !cb.seconds)) {
      verdict = "untested";
      td = spans(r.className, [[r.text, "fig"], ["untested", "untested"], [figures, "ttft"]]);
      td.title = name + ": untested, " + lacking(ca.seconds, cb.seconds) + " kept no per-second samples; coloured as measured";
    } else {
      s = byRepeats ? repeatsTest(ca.repeats, cb.repeats, test) : significance(ca.seconds, cb.seconds, test);
      verdict = verdictOf(s, r);
      td = verdict === "untested" ? spans("ratio-untested", [[r.text, "fig"], ["untested", "untested"], [figures, "ttft"]]) :
        verdict === "same" ? spans("ratio-same", [["~ " + r.text, "fig"], [figures, "ttft"]]) :
        verdict === "against" ? spans("ratio-same", [["~ " + r.text, "fig"], ["(against)", "against"], [figures, "ttft"]]) :
        spans(r.className + " sig-" + verdict, [[r.text, "fig"], ["≠", "mark-differs"], [figures, "ttft"]]);
      td.title = name + ": " + (byRepeats ? repeatWords(s, ca.repeats.length, cb.repeats.length, test) :
        testWords(s, ca.seconds.length, cb.seconds.length, "seconds", test)) + againstWords(verdict);
    }
    td.setAttribute("data-verdict", verdict);
    return td;
  }

  // verdictOf is a pair's mark: untested where its samples were too few to
  // test, gain or loss where significant in the direction of the ratio of
  // the figures shown, against where significant the other way (the ratio
  // is of median repeats, the test of means or ranks), same (~) where
  // tested and not significant.
  function verdictOf(s, r) {
    if (!s.tested) return "untested";
    if (!s.significant || r.value === 1) return "same";
    var shown = r.value > 1 ? 1 : -1;
    return s.direction !== shown ? "against" : shown > 0 ? "gain" : "loss";
  }

  function againstWords(verdict) {
    return verdict === "against" ? "; but the test finds B on the other side of A than the ratio shown: neither a gain nor a loss" : "";
  }

  // testWords says what the test found, for a cell's title: "Mann–Whitney
  // U over 30 v 30 seconds, p = 0.031, significant at 5 %".
  function testWords(s, m, n, unit, test) {
    if (!s.tested) {
      return "untested: " + m + " v " + n + " " + unit + " are too few: Mann–Whitney cannot reach p < " + test.alpha +
        " with these sizes, whatever they show (it needs " + test.min_samples + " a side or more, and sizes whose smallest possible p is below " +
        test.alpha + ": 3 against 3 cannot go below 0.1, 4 against 4 can)";
    }
    return "Mann–Whitney U over " + m + " v " + n + " " + unit + ", " + pWords(s.p, s.exact) + (s.significant ? ", significant" : ", not significant") +
      " at " + Math.round(100 * test.alpha) + " %";
  }

  // repeatWords says what the test of repeats found, for a cell's title:
  // "t over 3 v 3 repeats, p = 0.013, significant at 5 % (t = −4.12, 4
  // degrees of freedom)". Its p is studentP's, shown, never decided by.
  function repeatWords(s, m, n, test) {
    return "t over " + m + " v " + n + " repeats, " + pWords(studentP(s.t, s.df), true) + (s.significant ? ", significant" : ", not significant") +
      " at " + Math.round(100 * test.alpha) + " % (t = " + s.t.toPrecision(3) + ", " + s.df + " degrees of freedom)";
  }

  // pWords is a p as a title says it: "p = 0.031" ("≈" where it is the
  // normal approximation's), "p < 0.001" below.
  function pWords(p, exact) {
    return p < 0.001 ? "p < 0.001" : "p " + (exact ? "= " : "≈ ") + p.toPrecision(2);
  }

  // studentP is the two-sided p of Student's t with df degrees of freedom,
  // for a title only (the test decides by the build's critical t): 1 − A(t|df)
  // by the finite series of Abramowitz and Stegun 26.7.3 (odd df) and
  // 26.7.4 (even df), exact for whole df but for rounding.
  function studentP(t, df) {
    var theta = Math.atan(Math.abs(t) / Math.sqrt(df)), c2 = Math.cos(theta) * Math.cos(theta), sum = 1, term = 1, a, k;
    if (df % 2 === 1) {
      for (k = 3; k <= df - 2; k += 2) { term *= (k - 1) / k * c2; sum += term; }
      a = df === 1 ? 2 * theta / Math.PI : 2 / Math.PI * (theta + Math.sin(theta) * Math.cos(theta) * sum);
    } else {
      for (k = 2; k <= df - 2; k += 2) { term *= (k - 1) / k * c2; sum += term; }
      a = Math.sin(theta) * sum;
    }
    return Math.min(1, Math.max(0, 1 - a));
  }

  // repeatsTest is stats.CompareRepeats: Student's two-sample t of the
  // repeats' tok/s, variance pooled (pooledT), significant where |t|
  // reaches the build's critical t for its degrees of freedom, the t at
  // which the t distribution's two-sided p falls below alpha.
  function repeatsTest(a, b, test) {
    var m = a.length, n = b.length;
    if (m < test.min_repeats || n < test.min_repeats) return { tested: false, significant: false, direction: 0 };
    var t = pooledT(a, b), df = m + n - 2, critical = test.critical_t[df - 1];
    return { tested: true, repeats: true, t: t, df: df, critical: critical, significant: Math.abs(t) >= critical,
      direction: t > 0 ? 1 : t < 0 ? -1 : 0 };
  }

  // pooledT is stats.PooledT step for step, in the same order, so that the
  // page's t is the build's to the bit: b's mean less a's over the pooled
  // standard error.
  function pooledT(a, b) {
    var m = a.length, n = b.length, ma = mean(a), mb = mean(b), ss = 0, d, i;
    for (i = 0; i < m; i++) { d = a[i] - ma; ss += d * d; }
    for (i = 0; i < n; i++) { d = b[i] - mb; ss += d * d; }
    var pooled = ss / (m + n - 2);
    var se = Math.sqrt(pooled * (1 / m + 1 / n));
    return (mb - ma) / se;
  }

  // mean is stats.Mean: summed in order, then divided.
  function mean(xs) {
    var sum = 0;
    for (var i = 0; i < xs.length; i++) sum += xs[i];
    return sum / xs.length;
  }

  // significance is stats.CompareCell's rule, step for step, so that a
  // cell is significant here exactly where the build's table calls it so:
  // fewer than test.min_samples a side is not tested; otherwise a
  // two-sided Mann–Whitney U, tied values sharing the mean of their
  // ranks. Without ties and with at most test.exact_max a side, p is
  // exact (every ordering equally likely), significant below test.alpha;
  // otherwise the normal approximation (variance corrected for ties,
  // continuity ½) is significant where its z reaches test.critical_z, the
  // z at which the build's erfc falls below alpha. Its p is then shown
  // approximately (erfcApprox), never decided by.
  function significance(a, b, test) {
    var m = a.length, n = b.length;
    if (m < test.min_samples || n < test.min_samples || minP(m, n) >= test.alpha) return { tested: false, significant: false };
    var all = a.map(function (x, i) { return [x, i]; }).concat(b.map(function (x, i) { return [x, m + i]; }));
    all.sort(function (p, q) { return p[0] - q[0]; });
    var ranks = new Array(m + n), ties = false;
    for (var lo = 0; lo < all.length;) {
      var hi = lo + 1;
      while (hi < all.length && all[hi][0] === all[lo][0]) hi++;
      if (hi - lo > 1) ties = true;
      for (var k = lo; k < hi; k++) ranks[all[k][1]] = (lo + hi + 1) / 2;
      lo = hi;
    }
    var sumA = 0;
    for (var i = 0; i < m; i++) sumA += ranks[i];
    var u = sumA - m * (m + 1) / 2;
    // U counts the pairs in which a's value is the larger: below its
    // middle, b's tend to be the larger.
    var direction = u < m * n / 2 ? 1 : u > m * n / 2 ? -1 : 0;
    if (!ties && m <= test.exact_max && n <= test.exact_max) {
      var p = exactP(u, m, n);
      return { tested: true, exact: true, p: p, significant: p < test.alpha, direction: direction };
    }
    var total = m + n, sorted = ranks.slice().sort(function (x, y) { return x - y; }), tieSum = 0;
    for (lo = 0; lo < total;) {
      hi = lo + 1;
      while (hi < total && sorted[hi] === sorted[lo]) hi++;
      var t = hi - lo;
      tieSum += t * t * t - t;
      lo = hi;
    }
    var mn = m * n, variance = mn / 12 * ((total + 1) - tieSum / (total * (total - 1)));
    if (variance <= 0) return { tested: true, p: 1, significant: false, direction: 0 };
    var z = Math.max(0, Math.abs(u - mn / 2) - 0.5) / Math.sqrt(variance);
    return { tested: true, p: Math.max(minP(m, n), erfcApprox(z / Math.SQRT2)), significant: z >= test.critical_z, direction: direction };
  }

  // minP is stats.MinP: the smallest two-sided p samples of m and n can
  // give, 2 / C(m + n, m), at most 1. Sizes whose minP is not below alpha
  // are never tested (3 against 3: 0.1), and no p is shown below it.
  function minP(m, n) {
    if (m <= 0 || n <= 0) return 1;
    var k = Math.min(m, n), big = Math.max(m, n), c = 1;
    for (var i = 1; i <= k; i++) c = c * (big + i) / i;
    return Math.min(1, 2 / c);
  }

  // exactP is the two-sided p of U = u for m and n distinct values: twice
  // the smaller tail of uDistribution, at most 1.
  function exactP(u, m, n) {
    var freq = uDistribution(m, n), total = 0, below = 0, above = 0, k = Math.round(u);
    for (var v = 0; v < freq.length; v++) {
      total += freq[v];
      if (v <= k) below += freq[v];
      if (v >= k) above += freq[v];
    }
    return Math.min(1, 2 * Math.min(below, above) / total);
  }

  // uDistribution counts, for each U from 0 to m·n, the orderings of m and
  // n distinct values giving it: the largest value either is the first
  // sample's, beating all j of the second, or the second's, beating none,
  // so count(u; i, j) = count(u − j; i − 1, j) + count(u; i, j − 1).
  // Computed once for each pair of sizes: a page's cells share a few.
  var uDistributions = dict();
  function uDistribution(m, n) {
    var key = m + "x" + n;
    if (uDistributions[key]) return uDistributions[key];
    var size = m * n + 1, prev = new Float64Array((n + 1) * size), cur = new Float64Array((n + 1) * size);
    for (var j = 0; j <= n; j++) prev[j * size] = 1;
    for (var i = 1; i <= m; i++) {
      cur.fill(0);
      cur[0] = 1;
      for (j = 1; j <= n; j++) {
        var row = j * size, left = (j - 1) * size;
        for (var v = 0; v < size; v++) cur[row + v] = cur[left + v];
        for (v = j; v < size; v++) cur[row + v] += prev[row + v - j];
      }
      var swap = prev; prev = cur; cur = swap;
    }
    return (uDistributions[key] = prev.slice(n * size, (n + 1) * size));
  }

  // erfcApprox is erfc(x) for x ≥ 0 within 1.5e-7 (Abramowitz and Stegun
  // 7.1.26): enough to show a p, which is never decided by.
  function erfcApprox(x) {
    var t = 1 / (1 + 0.3275911 * x);
    return t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) * Math.exp(-x * x);
  }

  // byLabel maps figures by label: their text, or the figure itself.
  function byLabel(figures, whole) {
    var m = dict();
    figures.forEach(function (f) { m[f.label] = whole ? f : f.text; });
    return m;
  }

  // spans is a cell of spans, each [text, class].
  function spans(className, parts) {
    var td = el("td", undefined, className);
    parts.forEach(function (p) { td.appendChild(el("span", p[0], p[1])); });
    return td;
  }

  function sortedKeys(o) { return Object.keys(o).map(Number).sort(function (x, y) { return x - y; }); }

  // ratio is B / A as the page shows it, its class from the rules' bins;
  // null where either has no figure, or where B / A is no finite number
  // above 0 (figures so tiny the division overflows or underflows): the
  // rule stats.row keeps.
  function ratio(va, vb, rules) {
    if (!(va > 0) || !(vb > 0)) return null;
    var r = vb / va, bins = rules.ratio_bins, i = 0;
    if (!(r > 0) || !isFinite(r)) return null;
    while (i < bins.length - 1 && !(r < bins[i].below)) i++;
    return { value: r, text: r.toFixed(2) + "×", className: bins[i].class };
  }

  // ranked is the A, B and B / A cells of a figure both runs may have.
  // Where the figure can be tested (a prefill row: its requests) B / A is
  // tested as a decode cell is (ratioCell): coloured, and the higher of A
  // and B marked ★, only where significant; "~" where tested and not,
  // "untested" where a run kept too few requests or none. A figure that
  // is never tested (a headline figure: one number a run) has its higher
  // marked ★ (where the two read differently) and its B / A untested,
  // uncoloured. data-verdict says which.
  function ranked(fa, fb, rules, testable) {
    var r = ratio(fa.value, fb.value, rules);
    var ta = el("td", fa.text, "num"), tb = el("td", fb.text, "num");
    if (!r) return [ta, tb, el("td", "", "num")];
    var s = testable && fa.samples && fb.samples ? significance(fa.samples, fb.samples, rules.test) : { tested: false };
    var verdict = verdictOf(s, r), td;
    if (verdict === "gain" || verdict === "loss") {
      td = el("td", r.text, "num " + r.className + " sig-" + verdict);
      td.append(" ", el("span", "≠", "mark-differs"));
    } else if (verdict === "untested") {
      td = el("td", r.text, "num ratio-untested");
      td.append(" ", el("span", "untested", "untested"));
    } else {
      td = el("td", "~ " + r.text, "num ratio-same");
      if (verdict === "against") td.append(" ", el("span", "(against)", "against"));
    }
    // Two figures that read the same (344.9 and 344.9) have no higher.
    if ((!testable || verdict === "gain" || verdict === "loss") && fa.value !== fb.value && fa.text !== fb.text) (fb.value > fa.value ? tb : ta).classList.add("top");
    td.setAttribute("data-verdict", verdict);
    td.title = !testable ? "untested: a headline figure is one number a run, with no samples to test" :
      s.tested || (fa.samples && fb.samples) ? testWords(s, fa.samples.length, fb.samples.length, "requests", rules.test) + againstWords(verdict) :
      "untested: " + lacking(fa.samples, fb.samples) + " kept no requests";
    return [ta, tb, td];
  }

  // lacking names the runs without samples: "A", "B" or "A and B".
  function lacking(a, b) { return !a && !b ? "A and B" : !a ? "A" : "B"; }

  // table fills the table with this id: a head row, then rows of cells.
  function table(id, heads, rows) {
    var t = document.getElementById(id);
    t.replaceChildren();
    var head = t.appendChild(el("thead")).appendChild(el("tr"));
    heads.forEach(function (h) { head.appendChild(el("th", String(h))).setAttribute("scope", "col"); });
    var body = t.appendChild(el("tbody"));
    rows.forEach(function (r) {
      var tr = body.appendChild(el("tr", undefined, r.className));
      r.cells.forEach(function (c) { tr.appendChild(c); });
    });
  }

  function drawLaunch(a, b) {
    var box = document.getElementById("compare-launch");
    box.replaceChildren();
    if (!a.launch.length && !b.launch.length) return;
    var h = box.appendChild(el("h3", "Launch commands"));
    if (a.launch.join(" ") !== b.launch.join(" ")) h.append(" ", el("span", "differ", "badge"));
    [["A", a], ["B", b]].forEach(function (s) {
      box.appendChild(el("p", s[0] + " · " + s[1].id, "caption"));
      if (!s[1].launch.length) { box.appendChild(el("p", "—")); return; }
      var wrap = box.appendChild(el("div", undefined, "command"));
      var code = wrap.appendChild(el("pre")).appendChild(el("code"));
      s[1].launch.forEach(function (arg, i) { code.append(i ? " " : "", el("span", arg, "arg")); });
      var button = wrap.appendChild(el("button", "Copy", "copy"));
      button.type = "button";
      button.addEventListener("click", function () { copyText(code.textContent, button); });
    });
  }

  // drawComparePrefill fills the build's chart option with both runs'
  // prompt tok/s by context, and the table beside it: the server's own
  // prefill figure and the cold request's TTFT where a run has them.
  function drawComparePrefill(rules, a, b) {
    var rows = dict(), labels = dict();
    [a, b].forEach(function (r, i) {
      r.prefill.forEach(function (p) { (rows[p.context] = rows[p.context] || [null, null])[i] = p; labels[p.context] = p.label; });
    });
    var contexts = sortedKeys(rows), none = { text: "not measured", server: "", cold: "" };
    var option = JSON.parse(JSON.stringify(rules.prefill_chart)), described = [];
    option.yAxis[0].data = contexts.map(function (c) { return labels[c]; });
    [a, b].forEach(function (r, i) {
      var letter = i ? "B" : "A";
      option.series[i].data = contexts.map(function (c) {
        var p = rows[c][i];
        if (!p || p.tok_s === undefined) return "-";
        described.push(letter + " " + p.label + ": " + p.text + " tok/s");
        return { value: p.tok_s, label: { formatter: p.text } };
      });
    });
    var target = document.getElementById("compare-prefill-chart");
    target.setAttribute("aria-label", "Prefill tok/s by context: " + described.join("; "));
    target.style.height = (90 + 56 * contexts.length) + "px";
    if (typeof echarts !== "undefined") {
      var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
      if (dark) option.backgroundColor = "transparent";
      var chart = echarts.init(target, dark ? "dark" : null, { renderer: "canvas" });
      chart.setOption(option);
      window.addEventListener("resize", function () { chart.resize(); });
    }
    // Four columns at any width: the server's own figure and the cold
    // TTFT are rows beneath their context's, as on a run's page, so the
    // table fits a phone.
    var body = [];
    contexts.forEach(function (c) {
      var pa = rows[c][0] || none, pb = rows[c][1] || none;
      body.push({ cells: [el("th", labels[c])].concat(ranked({ text: pa.text, value: pa.tok_s, samples: pa.samples }, { text: pb.text, value: pb.tok_s, samples: pb.samples }, rules, true)) });
      [["server's own", "server"], ["cold TTFT", "cold"]].forEach(function (f) {
        if (pa[f[1]] || pb[f[1]]) body.push({ className: "sub", cells: [el("th", "↳ " + f[0]), el("td", pa[f[1]] || "—", "num"), el("td", pb[f[1]] || "—", "num"), el("td", "", "num")] });
      });
    });
    table("compare-prefill-table", ["Context", "A tok/s", "B tok/s", "B / A"], body);
  }

  wireCopyButtons();
  comparePage();

  // The index's Compare form: the pages' policy sends no form anywhere
  // (form-action 'none'), so the script goes to compare.html itself. A run
  // is never offered against itself: each picker disables the other's run.
  // It offers the runs the table shows: the page's, or a view's (the
  // summaries comparePicker's answer is given; null for the page's); its
  // Find field offers any run of the site whose id or model holds what it
  // says, from the index's chunks, each picker keeping its choice.
  function comparePicker() {
    var form = document.querySelector("form.pick");
    if (!form) return function () {};
    var a = form.querySelector("select[name=a]"), b = form.querySelector("select[name=b]");
    var find = form.querySelector("input[name=find]");
    var built = Array.prototype.map.call(a.options, function (o) { return [o.value, o.textContent]; });
    var offered = built, shownRuns = built, typing = null;
    function exclude() {
      [[a, b], [b, a]].forEach(function (p) {
        Array.prototype.forEach.call(p[0].options, function (o) { o.disabled = o.value === p[1].value; });
      });
    }
    function apart(moved, other) {
      if (moved.value === other.value) other.selectedIndex = (moved.selectedIndex + 1) % other.options.length;
      exclude();
    }
    function offer(runs) {
      if (runs === offered) return;
      offered = runs;
      [a, b].forEach(function (select) {
        var keep = select.selectedIndex >= 0 ? [select.value, select.options[select.selectedIndex].textContent] : null;
        var list = keep && !runs.some(function (r) { return r[0] === keep[0]; }) ? [keep].concat(runs) : runs;
        select.replaceChildren.apply(select, list.map(function (r) { var o = el("option", r[1]); o.value = r[0]; return o; }));
        if (keep) select.value = keep[0];
      });
      apart(b, a);
    }
    function summaryOption(s) { return [s[S.id], s[S.id] + " · " + s[S.model] + (s[S.simulated] ? " (simulated)" : "")]; }
    // B, the run compared against A, starts on the newest and A on the one
    // before, as the built compare pages and `matrixgen compare before after`.
    apart(b, a);
    a.addEventListener("change", function () { apart(a, b); });
    b.addEventListener("change", function () { apart(b, a); });
    if (find) {
      find.addEventListener("input", function () {
        clearTimeout(typing);
        typing = setTimeout(function () {
          var text = find.value.toLowerCase();
          if (!text) return offer(shownRuns);
          withSite(function (site) { withSummaries(site, function (all) {
            if (find.value.toLowerCase() !== text) return;
            offer(all.filter(function (s) {
              return String(s[S.id]).toLowerCase().indexOf(text) >= 0 || String(s[S.model]).toLowerCase().indexOf(text) >= 0;
            }).slice(0, 200).map(summaryOption));
          }); });
        }, 250);
      });
    }
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      window.location.href = "compare.html?a=" + encodeURIComponent(a.value) + "&b=" + encodeURIComponent(b.value);
    });
    return function (shown) {
      shownRuns = shown && shown.length > 1 ? shown.map(function (s) { return [s[S.id], s[S.id] + (s[S.simulated] ? " (simulated)" : "")]; }) : built;
      if (!find || !find.value) offer(shownRuns);
    };
  }

  // A run page lists the compare pages the site builds of it, from the
  // bucket script its id hashes to (compared.go), which hands its runs'
  // links to matrixgenCompared. Only buckets that hold a pair are written,
  // listed in buckets.js: the page loads the list, then its bucket only if
  // listed; a run in no pair shows nothing.
  function comparedLinks() {
    var section = document.getElementById("compared");
    if (!section) return;
    var id = section.getAttribute("data-id"), src = section.getAttribute("data-src");
    var bucket = parseInt(section.getAttribute("data-bucket"), 10);
    function load(src) {
      var script = document.createElement("script");
      script.src = src;
      document.head.appendChild(script);
    }
    // data-listed says what the list said: "no", nothing to show.
    window.matrixgenComparedBuckets = function (written) {
      var listed = Array.isArray(written) && written.indexOf(bucket) >= 0;
      section.setAttribute("data-listed", listed ? "yes" : "no");
      if (listed) load(src);
    };
    window.matrixgenCompared = function (at, runs) {
      if (at !== bucket) return;
      var mine = runs.filter(function (r) { return r[0] === id; })[0];
      if (!mine || !mine[1].length) return;
      var root = src.replace(/assets\/compared\/[^/]*$/, "");
      var list = section.querySelector("ul");
      list.replaceChildren.apply(list, mine[1].map(function (l) {
        var li = el("li"), a = el("a", id + " vs " + l[0]);
        a.setAttribute("href", root + "compare/" + l[1] + "/index.html");
        li.appendChild(a);
        return li;
      }));
      section.hidden = false;
    };
    load(section.getAttribute("data-list"));
  }
  comparedLinks();

  wireIndex(comparePicker());

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
        var cell = own(view.cells, id);
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
