// Session timeout warning for learners (shared classroom computers sign out when idle).
// About two minutes before the server signs the learner out, a dialog offers to stay signed in;
// once the time is up, the page goes to the sign-in page, where the server says why.
// Every word the dialog shows comes from the page (the <meta>'s data-* attributes), translated
// by the server; so does the sentence for each number of minutes (plural forms differ).
(function () {
  "use strict";

  var GRACE_MS = 2000; // go a moment after the server's deadline, never before it

  var settings = document.querySelector("meta[name=learner-session]");
  if (!settings || !window.fetch || !window.HTMLDialogElement) { return; }
  var keepAliveUrl = settings.getAttribute("data-keep-alive-url");
  var signInUrl = settings.getAttribute("data-sign-in-url");
  var WARN_BEFORE_S = parseInt(settings.getAttribute("data-warn-before"), 10);
  if (isNaN(WARN_BEFORE_S)) { WARN_BEFORE_S = 120; }
  var text = {
    title: settings.getAttribute("data-title") || "",
    stay: settings.getAttribute("data-stay") || "",
    failed: settings.getAttribute("data-failed") || "",
    aboutAMinute: settings.getAttribute("data-warning-about-a-minute") || "",
    underAMinute: settings.getAttribute("data-warning-under-a-minute") || "",
    minutes: {},
  };
  try {
    text.minutes = JSON.parse(settings.getAttribute("data-warning-minutes") || "{}") || {};
  } catch (error) {
    text.minutes = {};
  }
  var deadline = 0;
  var warnTimer = null;
  var endTimer = null;
  var dialog = null;
  var countdown = null;
  var problem = null;

  function csrfToken() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  // The sentence for the time left: whole minutes from 90 seconds, then "about a minute",
  // then "less than a minute".
  function warningText(seconds) {
    if (seconds >= 90) {
      var minutes = Math.round(seconds / 60);
      if (text.minutes[minutes]) { return text.minutes[minutes]; }
      // More minutes than the page has a sentence for: the largest it has.
      var counts = Object.keys(text.minutes).map(Number).sort(function (a, b) { return a - b; });
      if (counts.length) { return text.minutes[counts[counts.length - 1]]; }
    }
    if (seconds > 60) { return text.aboutAMinute; }
    return text.underAMinute;
  }

  function buildDialog() {
    dialog = document.createElement("dialog");
    dialog.className = "session-dialog";
    dialog.setAttribute("role", "alertdialog");
    dialog.setAttribute("aria-labelledby", "session-dialog-title");
    dialog.setAttribute("aria-describedby", "session-dialog-text");
    var title = document.createElement("h2");
    title.id = "session-dialog-title";
    title.textContent = text.title;
    countdown = document.createElement("p");
    countdown.id = "session-dialog-text";
    problem = document.createElement("p");
    problem.className = "error-message";
    problem.hidden = true;
    var stay = document.createElement("button");
    stay.type = "button";
    stay.className = "button";
    stay.textContent = text.stay;
    stay.addEventListener("click", keepAlive);
    // Escape, the usual way out of a dialog, means "stay signed in" here: closing the warning
    // without keeping the session would sign the learner out later with no second warning.
    dialog.addEventListener("cancel", function (event) {
      event.preventDefault();
      keepAlive();
    });
    dialog.appendChild(title);
    dialog.appendChild(countdown);
    dialog.appendChild(problem);
    dialog.appendChild(stay);
    document.body.appendChild(dialog);
  }

  function warn() {
    if (!dialog) { buildDialog(); }
    var left = Math.max(0, Math.round((deadline - Date.now()) / 1000));
    countdown.textContent = warningText(left);
    problem.hidden = true;
    if (!dialog.open) {
      dialog.showModal(); // moves focus into the dialog (to its button)
    }
  }

  function schedule(secondsLeft) {
    deadline = Date.now() + secondsLeft * 1000;
    window.clearTimeout(warnTimer);
    window.clearTimeout(endTimer);
    warnTimer = window.setTimeout(warn, Math.max(0, secondsLeft - WARN_BEFORE_S) * 1000);
    endTimer = window.setTimeout(function () {
      window.location.assign(signInUrl);
    }, secondsLeft * 1000 + GRACE_MS);
  }

  function keepAlive() {
    var body = new URLSearchParams();
    body.append("csrfmiddlewaretoken", csrfToken());
    fetch(keepAliveUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { Accept: "application/json", "X-CSRFToken": csrfToken() },
      body: body,
    })
      .then(function (response) {
        if (!response.ok) { throw new Error("status " + response.status); }
        return response.json();
      })
      .then(function (reply) {
        if (dialog && dialog.open) { dialog.close(); }
        schedule(reply.seconds_left);
      })
      .catch(function () {
        problem.textContent = text.failed;
        problem.hidden = false;
      });
  }

  // Another request from this page (an autosaved answer) counts as activity.
  document.addEventListener("portal:activity", function (event) {
    var left = event.detail && event.detail.secondsLeft;
    if (typeof left === "number") {
      if (dialog && dialog.open) { dialog.close(); }
      schedule(left);
    }
  });

  var secondsLeft = parseInt(settings.getAttribute("data-seconds-left"), 10);
  if (!isNaN(secondsLeft)) { schedule(secondsLeft); }
})();
