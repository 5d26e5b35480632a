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
