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

  // Every form with a text box: refuse a paste over the server's limit here (the text stays in the box and the
  // message is in the page's language), and show a loading state while the server works.
  function guardForms() {
    var body = document.body;
    var max = parseInt(body.getAttribute("data-max-chars") || "0", 10);
    var forms = document.querySelectorAll("form");
    for (var i = 0; i < forms.length; i++) {
      (function (form) {
        form.addEventListener("submit", function (ev) {
          var total = 0;
          var boxes = form.querySelectorAll("textarea");
          for (var j = 0; j < boxes.length; j++) total += boxes[j].value.length;
          var box = form.querySelector(".client-error");
          if (max && total > max) {
            ev.preventDefault();
            if (!box) {
              box = document.createElement("div");
              box.className = "error client-error";
              box.setAttribute("role", "alert");
              form.appendChild(box);
            }
            box.textContent = body.getAttribute("data-too-big") || "Too large";
            box.hidden = false;
            return;
          }
          if (box) box.hidden = true;
          form.setAttribute("aria-busy", "true");
          var spin = form.querySelector(".loading");
          if (spin) spin.hidden = false;
        });
      })(forms[i]);
    }
  }

  // The Plan page: once a result is shown, the address bar holds its permalink (share it, reload it).
  function planPermalink() {
    var link = document.getElementById("plan-permalink");
    if (link && window.history && window.history.replaceState) {
      window.history.replaceState(null, "", link.getAttribute("data-permalink"));
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    planExamples();
    guardForms();
    planPermalink();
    drawCharts();
  });
})();
