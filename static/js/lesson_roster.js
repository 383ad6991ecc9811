// The lesson roster on a class page (lessons app): fetched again every few seconds, so the
// teacher sees pupils sign in, move through their assessment and finish without reloading.
// The summary line is a polite live region, changed only when its words change; the list is
// not replaced while keyboard focus is inside it, so an "End session" button never vanishes
// from under the teacher's finger.
(function () {
  "use strict";
  var holder = document.getElementById("lesson-roster");
  var summary = document.getElementById("roster-summary");
  if (!holder || !window.fetch) { return; }
  var url = holder.getAttribute("data-roster-url");
  var every = 1000 * (parseInt(holder.getAttribute("data-refresh-seconds"), 10) || 5);

  function refresh() {
    if (document.hidden || holder.contains(document.activeElement)) {
      window.setTimeout(refresh, every);
      return;
    }
    fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (response) {
        if (!response.ok || response.redirected) { throw new Error("status " + response.status); }
        return response.text();
      })
      .then(function (html) {
        var next = new DOMParser().parseFromString(html, "text/html").querySelector(".roster");
        if (!next) { throw new Error("no roster"); }
        if (next.getAttribute("data-window-open") !== "1") {
          window.location.reload();  // sign-in closed (here or elsewhere): show the closed page
          return;
        }
        holder.replaceChildren(document.importNode(next, true));
        var words = next.getAttribute("data-summary") || "";
        if (summary && summary.textContent !== words) { summary.textContent = words; }
        window.setTimeout(refresh, every);
      })
      .catch(function () { window.setTimeout(refresh, every * 3); });
  }
  window.setTimeout(refresh, every);
})();
