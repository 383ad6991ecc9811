// Autosave on a question page: each answer is sent as soon as it is chosen.
// Without JavaScript (or fetch) nothing changes: the page's Save buttons send the whole page.
// The words it shows come from the page (the status element's data-* attributes), translated
// by the server, as do the messages of the server's replies.
(function () {
  "use strict";

  var form = document.querySelector("form[data-autosave-url]");
  var status = document.getElementById("autosave-status");
  if (!form || !status || !window.fetch || !window.URLSearchParams) { return; }
  var url = form.getAttribute("data-autosave-url");
  var page = form.getAttribute("data-page");
  var tokenInput = form.querySelector("input[name=csrfmiddlewaretoken]");
  var SAVED = status.getAttribute("data-saved") || "";
  var SAVING = status.getAttribute("data-saving") || "";
  var FAILED = status.getAttribute("data-failed") || "";
  // One request at a time, so a quick second click cannot be overtaken by the first.
  var queue = Promise.resolve();

  // Beside each question, where the learner is looking, the same words are shown as a mark
  // that screen readers skip: they hear the one live region at the foot of the form. Every
  // question gets its (empty) mark now, so that nothing moves when one fills in later.
  Array.prototype.forEach.call(form.querySelectorAll("fieldset"), function (field) {
    var mark = document.createElement("p");
    mark.className = "question-saved";
    mark.setAttribute("aria-hidden", "true");
    field.appendChild(mark);
  });

  function markOf(input) {
    var field = input.closest("fieldset");
    return field ? field.querySelector(".question-saved") : null;
  }

  function show(text, failed, mark) {
    status.classList.toggle("autosave-failed", Boolean(failed));
    // The region is polite: the same text is not announced again for every click.
    if (status.textContent !== text) { status.textContent = text; }
    if (mark) {
      mark.classList.toggle("autosave-failed", Boolean(failed));
      mark.textContent = text;
    }
  }

  function send(name) {
    var chosen = form.querySelector("input[type=radio][name='" + name + "']:checked");
    if (!chosen) { return Promise.resolve(); }
    var mark = markOf(chosen);
    if (mark) {
      mark.classList.remove("autosave-failed");
      mark.textContent = SAVING;
    }
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
            show(SAVED, false, mark);
            document.dispatchEvent(
              new CustomEvent("portal:activity", { detail: { secondsLeft: reply.seconds_left } })
            );
          } else {
            show(reply.message || FAILED, true, mark);
          }
        });
      })
      .catch(function () { show(FAILED, true, mark); });
  }

  form.addEventListener("change", function (event) {
    var input = event.target;
    if (!input || input.type !== "radio") { return; }
    queue = queue.then(function () { return send(input.name); });
  });
})();
