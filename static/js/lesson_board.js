// The board a class's sign-in is projected on (lessons app): while sign-in is open it asks for
// the page again every few seconds and puts in the new count and closing time, changing the
// status region only when its words change (a screen reader hears each change once). Once
// sign-in has closed it stops asking; "Refresh" reloads it. Without this script the board
// shows what it showed when loaded, and "Refresh" is how it updates.
(function () {
  "use strict";
  var status = document.getElementById("board-status");
  var full = document.querySelector("[data-fullscreen]");
  if (full && document.documentElement.requestFullscreen) {
    full.hidden = false;
    full.addEventListener("click", function () {
      if (document.fullscreenElement) {
        document.exitFullscreen();
      } else {
        document.documentElement.requestFullscreen();
      }
    });
  }
  if (!status || !window.fetch) { return; }
  var url = status.getAttribute("data-board-url");
  var every = 1000 * (parseInt(status.getAttribute("data-refresh-seconds"), 10) || 5);

  function isOpen(element) { return element.getAttribute("data-open") === "1"; }

  function refresh() {
    if (document.hidden) {
      window.setTimeout(refresh, every);
      return;
    }
    fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (response) {
        if (!response.ok || response.redirected) { throw new Error("status " + response.status); }
        return response.text();
      })
      .then(function (html) {
        var next = new DOMParser().parseFromString(html, "text/html").getElementById("board-status");
        if (!next) { throw new Error("no board"); }
        if (next.innerHTML.trim() !== status.innerHTML.trim()) {
          var parts = document.createDocumentFragment();
          Array.prototype.forEach.call(next.childNodes, function (node) {
            parts.appendChild(document.importNode(node, true));
          });
          status.replaceChildren(parts);
        }
        status.setAttribute("data-open", next.getAttribute("data-open"));
        if (isOpen(next)) { window.setTimeout(refresh, every); }
      })
      .catch(function () { window.setTimeout(refresh, every * 3); });
  }
  if (isOpen(status)) { window.setTimeout(refresh, every); }
})();
