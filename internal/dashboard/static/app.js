// Copy buttons: <button data-copy="input-id"> copies that input's value.
document.addEventListener("click", function (e) {
  var btn = e.target.closest("button[data-copy]");
  if (!btn) return;
  var input = document.getElementById(btn.getAttribute("data-copy"));
  var status = btn.parentElement.querySelector(".copied");
  function done(msg) { if (status) status.textContent = msg; }
  input.select();
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(input.value).then(function () { done("Copied."); }, function () { done("Press Ctrl+C to copy."); });
  } else {
    try { done(document.execCommand("copy") ? "Copied." : "Press Ctrl+C to copy."); } catch (err) { done("Press Ctrl+C to copy."); }
  }
});

// An analysis form's checked cost is stale once a value changes (an audit's render changes
// its price): say so until the cost is checked again. Without script the cost stays shown.
document.addEventListener("input", function (e) {
  var cost = e.target.closest("#analysis-form") && document.getElementById("cost");
  if (!cost || cost.getAttribute("data-stale")) return;
  cost.setAttribute("data-stale", "1");
  cost.textContent = "The values changed: check the cost again before running.";
});

// Sortable tables: <table class="sortable">; a header with data-type="num" sorts by its
// cells' data-v (or text) as numbers, unknown values last. Without script the table keeps
// the server's order.
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.tHead ? table.tHead.rows[0].cells : [];
  Array.prototype.forEach.call(heads, function (th, col) {
    var btn = document.createElement("button");
    btn.type = "button";
    while (th.firstChild) btn.appendChild(th.firstChild);
    th.appendChild(btn);
    btn.addEventListener("click", function () {
      var num = th.getAttribute("data-type") === "num";
      var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[col];
        var v = cell.hasAttribute("data-v") ? cell.getAttribute("data-v") : cell.textContent.trim();
        if (!num) return v.toLowerCase();
        v = parseFloat(v.replace(/,/g, ""));
        return isNaN(v) ? null : v;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === y) return 0;
        if (x === null) return 1;
        if (y === null) return -1;
        return (x < y ? -1 : 1) * dir;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});

// Print: a button where script runs, and every <details> open on paper.
document.querySelectorAll("button[data-print]").forEach(function (b) {
  b.hidden = false;
  b.addEventListener("click", function () { window.print(); });
});
window.addEventListener("beforeprint", function () {
  document.querySelectorAll("details:not([open])").forEach(function (d) { d.setAttribute("open", ""); d.setAttribute("data-printed", ""); });
});
window.addEventListener("afterprint", function () {
  document.querySelectorAll("details[data-printed]").forEach(function (d) { d.removeAttribute("open"); d.removeAttribute("data-printed"); });
});

// A page whose body says data-refresh (a job's page while the job runs) reloads itself after
// that many seconds. A script rather than <meta http-equiv="refresh">: assistive technology
// users can stop a script (and axe-core flags timed meta refreshes); without script the page
// offers a reload link.
(function () {
  var secs = parseInt(document.body.getAttribute("data-refresh"), 10);
  if (secs > 0) setTimeout(function () { location.reload(); }, secs * 1000);
})();
