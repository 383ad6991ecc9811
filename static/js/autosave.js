// Autosave on a question page: each answer is sent as soon as it is chosen.
// Without JavaScript (or fetch) nothing changes: the page's Save buttons send the whole page.
(function () {
  "use strict";

  var form = document.querySelector("form[data-autosave-url]");
  var status = document.getElementById("autosave-status");
  if (!form || !status || !window.fetch || !window.URLSearchParams) { return; }
  var url = form.getAttribute("data-autosave-url");
  var page = form.getAttribute("data-page");
  var tokenInput = form.querySelector("input[name=csrfmiddlewaretoken]");
  var FAILED = "Your answer could not be saved just now. " +
    "Use a Save button below to keep your answers.";
  // One request at a time, so a quick second click cannot be overtaken by the first.
  var queue = Promise.resolve();

  function show(text, failed) {
    status.classList.toggle("autosave-failed", Boolean(failed));
    // The region is polite: the same text is not announced again for every click.
    if (status.textContent !== text) { status.textContent = text; }
  }

  function send(name) {
    var chosen = form.querySelector("input[type=radio][name='" + name + "']:checked");
    if (!chosen) { return Promise.resolve(); }
    var body = new URLSearchParams();
    body.append("csrfmiddlewaretoken", tokenInput ? tokenInput.value : "");
    body.append("page", page);
    body.append(name, chosen.value);
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        Accept: "application/json",
        "X-CSRFToken": tokenInput ? tokenInput.value : "",
      },
      body: body,
    })
      .then(function (response) {
        return response.json().catch(function () { return {}; }).then(function (reply) {
          if (response.ok && reply.saved) {
            show("Saved", false);
            document.dispatchEvent(
              new CustomEvent("portal:activity", { detail: { secondsLeft: reply.seconds_left } })
            );
          } else {
            show(reply.message || FAILED, true);
          }
        });
      })
      .catch(function () { show(FAILED, true); });
  }

  form.addEventListener("change", function (event) {
    var input = event.target;
    if (!input || input.type !== "radio") { return; }
    queue = queue.then(function () { return send(input.name); });
  });
})();
