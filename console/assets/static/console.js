// Runnel console: live refresh of the parts of a page marked data-live.
// Every refreshMs the page is fetched again (same URL) and each live
// element is replaced by its namesake (same id) of the new page. The new
// page is parsed inert (DOMParser runs no script) and is the console's own
// server-rendered, escaped HTML. Nothing refreshes while the tab is hidden
// or while the user is typing in a form of a live part.
(function () {
  "use strict";
  var body = document.body;
  var ms = parseInt(body.getAttribute("data-refresh") || "0", 10);
  if (!ms || !window.fetch || !window.DOMParser) return;
  var busy = false;
  function editing() {
    var a = document.activeElement;
    return a && a.closest && a.closest("[data-live]") && /^(INPUT|TEXTAREA|SELECT)$/.test(a.tagName);
  }
  function tick() {
    var live = document.querySelectorAll("[data-live][id]");
    if (busy || document.hidden || editing() || live.length === 0) return schedule();
    busy = true;
    fetch(location.href, { credentials: "same-origin", headers: { "X-Console-Live": "1" } })
      .then(function (r) { return r.text(); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        live.forEach(function (el) {
          var fresh = doc.getElementById(el.id);
          if (fresh) el.replaceWith(document.importNode(fresh, true));
        });
        body.setAttribute("data-refreshed", String(Date.now()));
      })
      .catch(function () { body.setAttribute("data-refresh-failed", String(Date.now())); })
      .then(function () { busy = false; schedule(); });
  }
  function schedule() { setTimeout(tick, ms); }
  schedule();
})();
