// A roster sync being read or applied: ask for its page every few seconds and reload it once
// its state has changed (read, held, applied or failed). No words are written here.
// Without JavaScript the page refreshes itself (a <noscript> meta refresh) instead.
(function () {
  "use strict";
  var holder = document.getElementById("roster-wait");
  if (!holder || !window.fetch || !window.DOMParser) { return; }
  var shownState = holder.getAttribute("data-state");
  var every = 1000 * (parseInt(holder.getAttribute("data-refresh-seconds"), 10) || 3);

  function check() {
    fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) {
        // Redirected: signed out meanwhile (the session-timeout script says so); stop asking.
        if (response.redirected) { return null; }
        if (!response.ok) { throw new Error("status " + response.status); }
        return response.text();
      })
      .then(function (page) {
        if (page === null) { return; }
        var found = new DOMParser().parseFromString(page, "text/html").getElementById("roster-wait");
        if (!found || found.getAttribute("data-state") !== shownState) {
          window.location.reload();
          return;
        }
        window.setTimeout(check, every);
      })
      .catch(function () {
        // A network blip: ask again, less often.
        window.setTimeout(check, every * 4);
      });
  }

  window.setTimeout(check, every);
})();
