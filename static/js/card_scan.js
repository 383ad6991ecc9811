// Sign-in cards on /card/: a card's QR code links to /card/#<secret>. Opened from the card, the
// secret is taken from the address (the fragment never reaches a server log) and posted with
// the page's form. "Scan your card" reads the code with the camera: the browser's
// BarcodeDetector where it reads QR codes, else jsQR, fetched only when someone scans.
// Without JavaScript or a camera the section stays hidden and the typed-code form still works.
(function () {
  "use strict";

  // Every word the script shows, in one place, to be translated.
  const MESSAGES = {
    holdUp: "Hold your card up to the camera.",
    notACard: "That is not a sign-in card.",
    found: "Card found. Just a moment…",
    badLink: "That card link does not work. Scan the card or type its code.",
    cameraFailed: "The camera could not start. Type the code on your card instead.",
  };
  const SECRET = /^[A-Za-z0-9_-]{16,128}$/;
  const SCAN_EVERY_MS = 200; // often enough to feel instant, rarely enough for a slow phone

  function secretOf(fragment) {
    // "#abc" or "abc" -> "abc" if it is a well-formed secret, else null.
    let secret;
    try {
      secret = decodeURIComponent(fragment.replace(/^#/, ""));
    } catch (error) {
      return null; // a broken %-escape
    }
    return SECRET.test(secret) ? secret : null;
  }

  function cardSecret(text) {
    // The secret of a card's link, from any host: cards may be printed behind a proxy.
    let url;
    try {
      url = new URL(text, location.href);
    } catch (error) {
      return null;
    }
    return url.pathname.endsWith("/card/") ? secretOf(url.hash) : null;
  }

  function setUp() {
    const status = document.getElementById("scan-status");
    const form = document.getElementById("card-secret-form");
    const secretInput = document.getElementById("card-secret");
    if (!form || !secretInput) { return; }

    function say(text) {
      // The region is polite: setting the same words again would not be announced anyway.
      if (status && status.textContent !== text) { status.textContent = text; }
    }

    function submit(secret) {
      say(MESSAGES.found);
      secretInput.value = secret;
      form.submit();
    }

    function linkSecret() {
      // Opened from a card: take the secret out of the address bar at once (and so out of the
      // history, and of anything copied from it).
      if (location.hash.length <= 1) { return null; }
      const secret = secretOf(location.hash);
      history.replaceState(null, "", location.pathname + location.search);
      if (!secret) { say(MESSAGES.badLink); }
      return secret;
    }

    const media = navigator.mediaDevices;
    const scanner = media && media.getUserMedia ? setUpScanner(media, say, submit) : null;
    function send(secret) {
      if (scanner) { scanner.halt(); }
      submit(secret);
    }
    const secret = linkSecret();
    if (secret) { send(secret); }
    // A card's link opened while /card/ is already showing only changes the fragment.
    window.addEventListener("hashchange", function () {
      const changed = linkSecret();
      if (changed) { send(changed); }
    });
    window.addEventListener("pagehide", function () { secretInput.value = ""; });
  }

  function setUpScanner(media, say, submit) {
    // Shows the scanner and returns {halt} (camera off, no button) for a secret being sent.
    const section = document.getElementById("card-scan");
    const startButton = document.getElementById("scan-start");
    const stopButton = document.getElementById("scan-stop");
    const video = document.getElementById("scan-video");
    if (!section || !startButton || !stopButton || !video) { return null; }
    section.hidden = false; // with the status in it: "Card found" shows while a link's is sent

    let stream = null;
    let timer = 0;
    // Each start or stop begins a new session: a camera or a decode that answers after the
    // person stopped (or started again) sees a session that is no longer its own and gives up.
    let session = 0;
    let nativeDetector = null; // Promise of a BarcodeDetector for QR codes, or of null
    let jsQRLoaded = null; // Promise of the jsQR function
    let canvas = null;
    let context = null;

    function stopCamera() {
      session += 1;
      clearTimeout(timer);
      if (stream) {
        stream.getTracks().forEach(function (track) { track.stop(); });
        stream = null;
      }
      video.pause();
      video.srcObject = null;
      video.hidden = true;
      stopButton.hidden = true;
    }

    function stop() {
      const hadFocus = stopButton.contains(document.activeElement);
      stopCamera();
      startButton.hidden = false;
      if (hadFocus) { startButton.focus(); } // the focused button just disappeared
    }

    function fail() {
      stop();
      say(MESSAGES.cameraFailed);
      const codeInput = document.getElementById("id_code");
      if (codeInput) { codeInput.focus(); }
    }

    function detector() {
      if (!nativeDetector) {
        nativeDetector = (async function () {
          if (!window.BarcodeDetector) { return null; }
          try {
            const formats = await window.BarcodeDetector.getSupportedFormats();
            if (!formats.includes("qr_code")) { return null; }
            return new window.BarcodeDetector({ formats: ["qr_code"] });
          } catch (error) {
            return null;
          }
        })();
      }
      return nativeDetector;
    }

    function loadJsQR() {
      if (!jsQRLoaded) {
        jsQRLoaded = new Promise(function (resolve, reject) {
          const script = document.createElement("script");
          script.src = section.getAttribute("data-jsqr-src");
          script.addEventListener("load", function () {
            if (typeof window.jsQR === "function") {
              resolve(window.jsQR);
            } else {
              reject(new Error("jsQR did not define window.jsQR"));
            }
          });
          script.addEventListener("error", function () {
            jsQRLoaded = null; // a later scan may try again
            script.remove();
            reject(new Error("jsQR could not be loaded"));
          });
          document.head.appendChild(script);
        });
      }
      return jsQRLoaded;
    }

    async function readWithJsQR() {
      const jsQR = await loadJsQR();
      const width = video.videoWidth;
      const height = video.videoHeight;
      if (!canvas) {
        canvas = document.createElement("canvas");
        context = canvas.getContext("2d", { willReadFrequently: true });
      }
      if (canvas.width !== width) { canvas.width = width; }
      if (canvas.height !== height) { canvas.height = height; }
      context.drawImage(video, 0, 0, width, height);
      const pixels = context.getImageData(0, 0, width, height);
      const code = jsQR(pixels.data, width, height, { inversionAttempts: "dontInvert" });
      return code ? [code.data] : [];
    }

    async function readFrame() {
      // The texts of the QR codes in the current frame (none until the video has a frame).
      if (video.readyState < video.HAVE_CURRENT_DATA || !video.videoWidth) { return []; }
      const native = await detector();
      if (native) {
        try {
          const codes = await native.detect(video);
          return codes.map(function (code) { return code.rawValue; });
        } catch (error) {
          nativeDetector = Promise.resolve(null); // this browser's detector fails: use jsQR
        }
      }
      return readWithJsQR();
    }

    async function scan(mine) {
      let texts;
      try {
        texts = await readFrame();
      } catch (error) {
        if (mine === session) { fail(); }
        return;
      }
      if (mine !== session) { return; }
      for (const text of texts) {
        const secret = cardSecret(text);
        if (secret) {
          stopCamera();
          submit(secret);
          return;
        }
      }
      if (texts.length) { say(MESSAGES.notACard); }
      timer = setTimeout(scan, SCAN_EVERY_MS, mine);
    }

    async function start() {
      stopCamera();
      const mine = session;
      startButton.hidden = true;
      stopButton.hidden = false; // at once, so that a pending permission prompt can be given up
      stopButton.focus();
      try {
        const camera = await media.getUserMedia({
          // 720p where the camera has it: a small card's code gets twice the pixels a module
          // that the default 640x480 gives, and jsQR misses fewer codes.
          video: { facingMode: "environment", width: { ideal: 1280 }, height: { ideal: 720 } },
          audio: false,
        });
        if (mine !== session) { // stopped while the browser was asking
          camera.getTracks().forEach(function (track) { track.stop(); });
          return;
        }
        stream = camera;
        video.srcObject = camera;
        video.hidden = false;
        say(MESSAGES.holdUp);
        await video.play();
      } catch (error) {
        // NotAllowedError, NotFoundError, NotReadableError, or a play() that was refused.
        if (mine === session) { fail(); }
        return;
      }
      if (mine === session) { scan(mine); }
    }

    startButton.addEventListener("click", start);
    stopButton.addEventListener("click", function () {
      stop();
      say("");
    });
    // Leaving the page turns the camera off; a page restored from the back/forward cache
    // comes back ready to scan again.
    window.addEventListener("pagehide", stopCamera);
    window.addEventListener("pageshow", function (event) {
      if (event.persisted) {
        stop();
        say("");
      }
    });
    return {
      halt: function () {
        stopCamera();
        startButton.hidden = true;
      },
    };
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setUp);
  } else {
    setUp();
  }
})();
