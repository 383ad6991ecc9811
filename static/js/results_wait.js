// The page of answers on their way (being sent, waiting to be sent, sent without results yet)
// asks the portal every few seconds where they stand: the portal's own records, never the
// assessment service, and these requests do not keep an idle session alive. Once that changes
// the panel says so, with a link to read the results (or to see what changed): a sentence
// added to the panel's live region, so a screen reader hears it, and nothing moves under the
// learner's finger. Every word comes from the page, already translated; none is written here.
// Without JavaScript the page's own "Refresh this page" and "Check for results" do the same.
(function () {
  "use strict";
  var holder = document.getElementById("results-wait");
  if (!holder || !window.fetch) { return; }
  var panel = holder.querySelector(".panel");
  var url = holder.getAttribute("data-status-url");
  var shownState = holder.getAttribute("data-state");
  var every = 1000 * (parseInt(holder.getAttribute("data-refresh-seconds"), 10) || 15);

  var news = null;

  function tell(state) {
    var arrived = state === "completed";
    if (news) { news.remove(); }
    news = document.createElement("p");
    news.className = "results-news";
    var words = document.createElement("strong");
    words.textContent = holder.getAttribute(arrived ? "data-arrived" : "data-changed");
    var link = document.createElement("a");
    link.className = "button";
    link.href = holder.getAttribute("data-results-url");
    link.textContent = holder.getAttribute(arrived ? "data-arrived-link" : "data-changed-link");
    news.appendChild(words);
    news.appendChild(document.createTextNode(" "));
    news.appendChild(link);
    panel.appendChild(news);
  }

  function check() {
    if (document.hidden) {
      window.setTimeout(check, every);
      return;
    }
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        // Redirected: signed out meanwhile (the session-timeout script says so); stop asking.
        if (response.redirected) { return null; }
        if (!response.ok) { throw new Error("status " + response.status); }
        return response.json();
      })
      .then(function (status) {
        if (!status) { return; }
        if (status.state !== shownState) {
          shownState = status.state;
          tell(status.state);
        }
        // Still on their way (sent, say, after being sent): ask on until the results come.
        if (status.waiting) { window.setTimeout(check, every); }
      })
      .catch(function () {
        // A network blip: ask again, less often.
        window.setTimeout(check, every * 4);
      });
  }

  window.setTimeout(check, every);
})();
