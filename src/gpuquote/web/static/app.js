// gpuquote pages: draw the Plotly figures built server-side; swap the Plan page's example job.
// No inline script anywhere (the Content-Security-Policy allows scripts from this server only).
(function () {
  "use strict";

  function drawCharts() {
    var boxes = document.querySelectorAll(".chart[data-figure]");
    for (var i = 0; i < boxes.length; i++) {
      var box = boxes[i];
      var src = document.getElementById(box.getAttribute("data-figure"));
      if (!src) continue;
      if (typeof window.Plotly === "undefined") {
        box.textContent = "Chart library not loaded (plotly.min.js).";
        box.classList.add("chart-missing");
        continue;
      }
      var fig = JSON.parse(src.textContent);
      window.Plotly.newPlot(box, fig.data, fig.layout, {displaylogo: false, responsive: true})
        .then(function (el) { el.setAttribute("data-rendered", "1"); });
    }
  }

  function planExamples() {
    var sel = document.getElementById("plan-example");
    var area = document.getElementById("plan-job");
    var data = document.getElementById("plan-examples");
    var link = document.getElementById("plan-load-example");
    if (!sel || !area || !data) return;
    var examples = JSON.parse(data.textContent);
    function byId(id) {
      for (var i = 0; i < examples.length; i++) if (examples[i].id === id) return examples[i];
      return null;
    }
    function sync() { if (link) link.href = "/plan?example=" + encodeURIComponent(sel.value); }
    sel.addEventListener("change", function () {
      var ex = byId(sel.value);
      if (ex) area.value = ex.text;
      sync();
    });
    sync();
  }

  document.addEventListener("DOMContentLoaded", function () {
    planExamples();
    drawCharts();
  });
})();
