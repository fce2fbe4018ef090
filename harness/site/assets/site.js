// The Tasks page: filters, search and pages over window.ENVGAP_TASKS (assets/tasks-data.js).
// Rows are built with textContent only: no text of a candidate is ever parsed as HTML.
(function () {
  "use strict";
  var data = window.ENVGAP_TASKS;
  var tbody = document.getElementById("rows");
  if (!data || !tbody) { return; }
  var PAGE = 100;
  var col = {};
  data.columns.forEach(function (c, i) { col[c] = i; });
  var rows = data.rows;
  // The text a search looks in, lower-cased once.
  var hay = rows.map(function (r) {
    return (r[col.instance_id] + "\n" + r[col.repo] + "\n" + r[col.reason] + "\n" + r[col.made_by] + "\n" + r[col.excluded]).toLowerCase();
  });
  var el = function (id) { return document.getElementById(id); };
  var fSet = el("f-set"), fOutcome = el("f-outcome"), fEco = el("f-eco"), q = el("q");
  var count = el("count"), pageLabel = el("page"), prev = el("prev"), next = el("next");
  var shown = [], page = 0;
  var shownCols = ["instance_id", "set", "outcome", "reason", "ecosystem", "repo", "made_by", "registry_date", "excluded"];

  function filter() {
    var s = fSet.value, o = fOutcome.value, e = fEco.value, t = q.value.trim().toLowerCase();
    shown = [];
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      if (s && r[col.set] !== s) { continue; }
      if (o && r[col.outcome] !== o) { continue; }
      if (e && r[col.ecosystem] !== e) { continue; }
      if (t && hay[i].indexOf(t) < 0) { continue; }
      shown.push(i);
    }
    page = 0;
    render();
  }

  function render() {
    var pages = Math.max(1, Math.ceil(shown.length / PAGE));
    if (page >= pages) { page = pages - 1; }
    var frag = document.createDocumentFragment();
    var end = Math.min(shown.length, (page + 1) * PAGE);
    for (var k = page * PAGE; k < end; k++) {
      var r = rows[shown[k]];
      var tr = document.createElement("tr");
      shownCols.forEach(function (c) {
        var td = document.createElement("td");
        if (c === "instance_id") {
          var a = document.createElement("a");
          a.setAttribute("href", "tasks/" + r[col.page]);
          a.textContent = r[col.instance_id];
          td.appendChild(a);
        } else {
          td.textContent = r[col[c]];
        }
        tr.appendChild(td);
      });
      frag.appendChild(tr);
    }
    tbody.replaceChildren(frag);
    count.textContent = shown.length + " of " + rows.length + " candidates";
    count.setAttribute("data-count", String(shown.length));
    pageLabel.textContent = "page " + (page + 1) + " of " + pages;
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
  }

  [fSet, fOutcome, fEco].forEach(function (x) { x.addEventListener("change", filter); });
  q.addEventListener("input", filter);
  el("filters").addEventListener("submit", function (ev) { ev.preventDefault(); });
  prev.addEventListener("click", function () { if (page > 0) { page--; render(); } });
  next.addEventListener("click", function () { page++; render(); });
  filter();
  document.body.setAttribute("data-ready", "1");
})();
