// A passkey or security key that was not used (cancelled, timed out, refused): allauth's script
// (mfa/js/webauthn.js) raises `allauth.error`; say it on the page, next to the button.
(function () {
  document.addEventListener('allauth.error', function (event) {
    const message = document.getElementById('passkey-error')
    if (message) {
      message.hidden = false
      event.preventDefault()
    }
  })
})()
