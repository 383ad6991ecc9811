// Import progress: poll the job's JSON and move the bar in place; reload once it has finished.
// Without JavaScript the page refreshes itself (a <noscript> meta refresh) instead.
// Every text it shows comes from the server, already translated: the JSON's summary and
// percent_text, in the page's language. No words are written here. The bar's value and the
// summary's count are the same figure of the same JSON (imports/progress.py), so they agree.
(function () {
  "use strict";
  var POLL_MS = 2000;
  var ANNOUNCE_EVERY_MS = 30000; // screen readers hear the figures twice a minute, not every poll

  var root = document.getElementById("import-job");
  if (!root || !window.fetch) { return; }
  var url = root.getAttribute("data-progress-url");
  var bar = document.getElementById("import-progress");
  var summary = document.getElementById("import-summary");
  var announcer = document.getElementById("import-announcer");
  var lastAnnounced = Date.now();

  function update(progress) {
    if (progress.finished) {
      window.location.reload();
      return;
    }
    bar.max = progress.to_send || 1;
    bar.value = progress.done;
    bar.textContent = progress.percent_text;
    summary.textContent = progress.summary;
    if (Date.now() - lastAnnounced >= ANNOUNCE_EVERY_MS) {
      announcer.textContent = progress.summary;
      lastAnnounced = Date.now();
    }
    window.setTimeout(poll, POLL_MS);
  }

  function poll() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) { throw new Error("status " + response.status); }
        return response.json();
      })
      .then(update)
      .catch(function () {
        // A network blip or a signed-out session: try again later, more slowly.
        window.setTimeout(poll, POLL_MS * 5);
      });
  }

  window.setTimeout(poll, POLL_MS);
})();
