// Read aloud on a question page: a speaker button beside each question and each answer.
// It speaks with the browser's own voice where the browser has one for the page's language;
// else it plays the audio the portal made (data-audio); a button with neither stays hidden.
// Where the school reads aloud by itself (data-auto="true") the first question is read as the
// page appears and an answer when it is chosen, unless the pupil turned that off (the toggle,
// remembered on this device). Without JavaScript nothing shows: every button starts hidden.
// Nothing here uses a live region: a screen reader is never spoken over unless asked.
(function () {
  "use strict";

  var VOICE_WAIT_MS = 1500; // voices may load late; past this, the browser has none
  var STORED = "portal.readAloud"; // "on" or "off": the pupil's choice on this device
  var RATE = 0.9; // a little slower than usual suits children

  var box = document.querySelector(".read-aloud");
  var buttons = Array.prototype.slice.call(document.querySelectorAll("button.speak[data-speak]"));
  if (!box && !buttons.length) { return; }
  var toggle = box ? box.querySelector(".read-aloud-toggle") : null;
  var language = ((box && box.getAttribute("data-lang")) || document.documentElement.lang ||
    "en").toLowerCase();
  var autoRead = Boolean(box) && box.getAttribute("data-auto") === "true";
  var synth = window.speechSynthesis;
  var voice = null; // the browser's voice for the page's language, once found
  var playing = null; // the portal's audio now playing
  var pending = null; // a reading the browser refused before the pupil's first gesture

  function primary(tag) {
    return tag.toLowerCase().replace("_", "-").split("-")[0];
  }

  function bestVoice() {
    // The page's own language first ("en-gb"), then its family ("en" for an en-US voice).
    var voices = synth && synth.getVoices ? synth.getVoices() || [] : [];
    var exact = null;
    var near = null;
    voices.forEach(function (each) {
      var tag = (each.lang || "").toLowerCase().replace("_", "-");
      if (tag === language && !exact) { exact = each; }
      if (primary(tag) === primary(language) && !near) { near = each; }
    });
    return exact || near;
  }

  function findVoice(done) {
    if (!synth || !window.SpeechSynthesisUtterance) { done(null); return; }
    var found = bestVoice();
    if (found) { done(found); return; }
    var finished = false;
    function finish() {
      if (finished) { return; }
      var now = bestVoice();
      if (!now && timer) { return; } // still waiting: a list without our language came
      finished = true;
      clearTimeout(timer);
      if (synth.removeEventListener) { synth.removeEventListener("voiceschanged", changed); }
      done(now);
    }
    function changed() { finish(); }
    var timer = setTimeout(function () { timer = null; finish(); }, VOICE_WAIT_MS);
    if (synth.addEventListener) { synth.addEventListener("voiceschanged", changed); }
  }

  function audioOf(text) {
    for (var i = 0; i < buttons.length; i += 1) {
      var url = buttons[i].getAttribute("data-audio");
      if (buttons[i].getAttribute("data-speak") === text && url) { return url; }
    }
    return null;
  }

  function stop() {
    if (synth && voice) { synth.cancel(); }
    if (playing) {
      playing.pause();
      playing = null;
    }
  }

  // Speak text; `refused` is called if the browser will not until the pupil does something.
  function speak(text, refused) {
    stop();
    if (voice) {
      var utterance = new SpeechSynthesisUtterance(text);
      utterance.lang = voice.lang || language;
      try {
        utterance.voice = voice;
      } catch (error) {
        // Not a voice object this browser accepts: the language alone chooses one.
      }
      utterance.rate = RATE;
      if (refused) {
        utterance.addEventListener("error", function (event) {
          if (event.error === "not-allowed") { refused(); }
        });
      }
      synth.speak(utterance);
      return;
    }
    var url = audioOf(text);
    if (!url) { return; }
    var audio = new Audio(url);
    playing = audio;
    var started = audio.play();
    if (started && started.catch) {
      started.catch(function (error) {
        if (refused && error && error.name === "NotAllowedError") { refused(); }
      });
    }
  }

  function canSpeak(text) {
    return Boolean(voice) || Boolean(audioOf(text));
  }

  function storedOn() {
    try {
      return window.localStorage.getItem(STORED) !== "off";
    } catch (error) {
      return true; // storage refused (a private window): the school's setting stands
    }
  }

  function store(on) {
    try {
      window.localStorage.setItem(STORED, on ? "on" : "off");
    } catch (error) {
      // Not remembered on this device; the choice still holds on this page.
    }
  }

  var on = storedOn();

  function showToggle() {
    toggle.setAttribute("aria-pressed", on ? "true" : "false");
    var label = toggle.getAttribute(on ? "data-on-label" : "data-off-label") ||
      box.getAttribute(on ? "data-on-label" : "data-off-label");
    if (label) { toggle.textContent = label; }
  }

  function readFirstQuestion() {
    // The first button that is not an answer's is the first question's (it may have no audio
    // where an answer has: then nothing is read, rather than an answer out of turn).
    var answers = {};
    Array.prototype.forEach.call(document.querySelectorAll("input[type=radio][data-speak]"),
      function (input) { answers[input.getAttribute("data-speak")] = true; });
    var first = null;
    for (var i = 0; i < buttons.length && first === null; i += 1) {
      var text = buttons[i].getAttribute("data-speak");
      if (!Object.prototype.hasOwnProperty.call(answers, text)) { first = text; }
    }
    if (!first || !canSpeak(first)) { return; }
    speak(first, function () {
      // Refused before the pupil did anything: read it at their first click or key.
      pending = first;
    });
  }

  function afterGesture() {
    // Before the pupil's own click or key: what they chose (a button, an answer) comes after,
    // and speaks over this.
    if (!pending) { return; }
    var text = pending;
    pending = null;
    if (on) { speak(text); }
  }

  function start(found) {
    voice = found;
    var usable = false;
    buttons.forEach(function (button) {
      if (canSpeak(button.getAttribute("data-speak"))) {
        button.hidden = false;
        usable = true;
      }
    });
    // Said on the page (for its style, and its tests): how it reads aloud, if at all.
    document.documentElement.setAttribute("data-read-aloud",
      voice ? "voice" : usable ? "audio" : "none");
    if (!usable) { return; }
    document.addEventListener("click", function (event) {
      var button = event.target.closest ? event.target.closest("button.speak") : null;
      if (button && !button.hidden) { speak(button.getAttribute("data-speak")); }
    });
    if (!autoRead) { return; }
    if (toggle) {
      showToggle();
      toggle.hidden = false;
      toggle.addEventListener("click", function () {
        on = !on;
        store(on);
        showToggle();
        if (!on) {
          pending = null;
          stop();
        }
      });
    }
    document.addEventListener("change", function (event) {
      var input = event.target;
      if (!on || input.type !== "radio" || !input.checked) { return; }
      var text = input.getAttribute("data-speak");
      if (text && canSpeak(text)) {
        pending = null;
        speak(text);
      }
    });
    document.addEventListener("click", afterGesture, true);
    document.addEventListener("keydown", afterGesture, true);
    if (on) { readFirstQuestion(); }
  }

  findVoice(start);
})();
