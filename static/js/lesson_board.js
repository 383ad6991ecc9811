// The board a class's sign-in is projected on (lessons app): it asks for the page again, every
// few seconds while sign-in is open and less often while it is closed (so a board put up before
// the teacher opens sign-in starts counting by itself), and only while the page is visible. It
// puts in the new count and closing time, changing the status region only when its words change
// (a screen reader hears each change once). Its requests say they are not the teacher's doing
// (X-Not-Activity), so the projector's staff session still ends when nobody uses it. Once the
// portal answers with a redirect (signed out) or a refusal, it stops and says to refresh.
// Without this script the board shows what it showed when loaded, and "Refresh" updates it.
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
  var stopped = document.getElementById("board-stopped");
  var url = status.getAttribute("data-board-url");
  var open = 1000 * (parseInt(status.getAttribute("data-refresh-seconds"), 10) || 5);
  var closed = 1000 * (parseInt(status.getAttribute("data-closed-refresh-seconds"), 10) || 20);

  function isOpen(element) { return element.getAttribute("data-open") === "1"; }

  function later(factor) {
    window.setTimeout(refresh, (isOpen(status) ? open : closed) * (factor || 1));
  }

  function stop() {
    if (stopped) { stopped.hidden = false; }
  }

  function refresh() {
    if (document.hidden) {
      later();
      return;
    }
    fetch(url, {
      credentials: "same-origin",
      redirect: "manual",
      headers: { "Accept": "text/html", "X-Not-Activity": "1" }
    })
      .then(function (response) {
        // Signed out (a redirect to sign in) or refused: asking again would not help.
        if (response.type === "opaqueredirect" || response.redirected ||
            (response.status >= 300 && response.status < 500)) {
          stop();
          return null;
        }
        if (!response.ok) { throw new Error("status " + response.status); }
        return response.text();
      })
      .then(function (html) {
        if (html === null) { return; }
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
        later();
      })
      .catch(function () { later(3); });
  }
  later();
})();
