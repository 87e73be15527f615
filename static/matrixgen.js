// matrixgen page behaviour: the prefill chart and the copy button.
// Data comes from <script type="application/json"> blocks, never from inline
// code, so pages work under a Content-Security-Policy without 'unsafe-inline'.
(function () {
  "use strict";

  function drawCharts() {
    if (typeof echarts === "undefined") return;
    document.querySelectorAll("script[type='application/json'][id$='-option']").forEach(function (data) {
      var target = document.getElementById(data.id.replace(/-option$/, ""));
      if (!target) return;
      var option = JSON.parse(data.textContent);
      var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
      var chart = echarts.init(target, dark ? "dark" : null, { renderer: "canvas" });
      if (dark) option.backgroundColor = "transparent";
      chart.setOption(option);
      window.addEventListener("resize", function () { chart.resize(); });
    });
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

  wireCopyButtons();
  drawCharts();
})();
