// Read aloud on a question page: a speaker button beside each question and each answer.
// It speaks with the browser's own voice where the browser has one for the page's language and
// that voice runs on the device (localService: a network voice, such as Chrome's "Google UK
// English", would send the question and the pupil's answer to its maker, and no request leaves
// the portal's origin); else, or if that voice fails, it plays the audio the portal made
// (data-audio); a button with neither stays hidden.
// Where the school reads aloud by itself (data-auto="true"), and the pupil did not turn that off
// (the toggle, remembered on this device; its label stays, data-label on the box or its own
// text, and only aria-pressed says on or off), it speaks only after the pupil's pointer (mouse,
// touch or pen): an answer chosen by a tap or click is read, and the first question is read as
// the page appears when the page before was left by a tap or click (remembered for this tab's
// session). A keyboard, or a screen reader's own activation (a click with no pointer before it),
// starts nothing by itself: the speaker buttons still speak when pressed. A browser that refuses
// to speak before the pupil does anything reads nothing until asked again. Without JavaScript
// nothing shows: every button starts hidden.
// Nothing here uses a live region: a screen reader is never spoken over unless asked.
(function () {
  "use strict";

  var VOICE_WAIT_MS = 1500; // voices may load late; past this, the browser has none
  var STORED = "portal.readAloud"; // "on" or "off": the pupil's choice on this device
  // "pointer", "keyboard" or "other": how the pupil last acted, for this tab's session.
  var LAST_INPUT = "portal.readAloudInput";
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
  // A voice's failures after which the portal's audio plays instead: not a refusal, nor one
  // reading cut short by the next.
  var NOT_FAILURES = { "not-allowed": true, interrupted: true, canceled: true };

  function primary(tag) {
    return tag.toLowerCase().replace("_", "-").split("-")[0];
  }

  function bestVoice() {
    // The page's own language first ("en-gb"), then its family ("en" for an en-US voice).
    var voices = synth && synth.getVoices ? synth.getVoices() || [] : [];
    var exact = null;
    var near = null;
    voices.forEach(function (each) {
      if (each.localService !== true) { return; } // spoken elsewhere: the text would leave
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

  function play(url) {
    var audio = new Audio(url);
    playing = audio;
    return audio.play();
  }

  // Speak text (the browser refusing until the pupil does something: nothing is said).
  function speak(text) {
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
      utterance.addEventListener("error", function (event) {
        var url = audioOf(text);
        if (url && !Object.prototype.hasOwnProperty.call(NOT_FAILURES, event.error)) {
          play(url);
        }
      });
      synth.speak(utterance);
      return;
    }
    var url = audioOf(text);
    if (!url) { return; }
    var started = play(url);
    if (started && started.catch) {
      started.catch(function () {
        // Refused before the pupil's first gesture (or the file failed): nothing is said.
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

  function lastInput() {
    try {
      return window.sessionStorage.getItem(LAST_INPUT);
    } catch (error) {
      return null; // storage refused: never read by itself on arrival
    }
  }

  function noteInput(kind) {
    try {
      window.sessionStorage.setItem(LAST_INPUT, kind);
    } catch (error) {
      // Not remembered: the next page reads nothing by itself on arrival.
    }
  }

  // Whether the click or change now happening follows the pupil's pointer. A screen reader
  // activates by a click with no pointerdown before it; a key goes through keydown.
  var byPointer = false;
  document.addEventListener("pointerdown", function () { byPointer = true; }, true);
  document.addEventListener("pointercancel", function () { byPointer = false; }, true);
  document.addEventListener("keydown", function () {
    byPointer = false;
    noteInput("keyboard");
  }, true);
  document.addEventListener("click", function () {
    noteInput(byPointer ? "pointer" : "other");
    // A label's click passes to its radio (a click, then change) within this task: kept till
    // then.
    setTimeout(function () { byPointer = false; }, 0);
  }, true);
  var arrivedByPointer = lastInput() === "pointer";

  function showToggle() {
    // Only the state changes: a label that changed too would be heard as "off, not pressed".
    toggle.setAttribute("aria-pressed", on ? "true" : "false");
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
    // Refused before the pupil did anything: not kept for their first key, which may be a
    // Tab heard by a screen reader. The next answer tapped, or speaker pressed, is read.
    speak(first);
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
      var label = box.getAttribute("data-label");
      if (label) { toggle.textContent = label; }
      showToggle();
      toggle.hidden = false;
      toggle.addEventListener("click", function () {
        on = !on;
        store(on);
        showToggle();
        if (!on) { stop(); }
      });
    }
    document.addEventListener("change", function (event) {
      var input = event.target;
      if (!on || !byPointer || input.type !== "radio" || !input.checked) { return; }
      var text = input.getAttribute("data-speak");
      if (text && canSpeak(text)) { speak(text); }
    });
    if (on && arrivedByPointer) { readFirstQuestion(); }
  }

  findVoice(start);
})();
