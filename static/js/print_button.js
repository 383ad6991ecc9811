// A "Print" button for pages made to be printed (sign-in cards). Without JavaScript the page
// says to use the browser's own Print, so the button stays hidden.
(function () {
  "use strict";
  document.querySelectorAll("[data-print]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () { window.print(); });
  });
})();
