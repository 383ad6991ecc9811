"""A short, address-free description of the device a card was used on, for the teacher."""

import re

from django.utils.translation import gettext as _

# Most specific first: Edge and Opera say "Chrome" too, and Chrome says "Safari".
_BROWSERS = (
    ("Edg/", "Edge"),
    ("OPR/", "Opera"),
    ("SamsungBrowser/", "Samsung Internet"),
    ("Firefox/", "Firefox"),
    ("FxiOS/", "Firefox"),
    ("CriOS/", "Chrome"),
    ("Chrome/", "Chrome"),
    ("Chromium/", "Chromium"),
    ("Safari/", "Safari"),
)


def device_description(user_agent: str) -> str:
    """Return e.g. "Chrome on a Chromebook" or "Safari on an iPad" from a User-Agent header."""
    agent = user_agent[:512]
    browser = next((name for marker, name in _BROWSERS if marker in agent), None)
    if "iPad" in agent or ("Macintosh" in agent and "Mobile/" in agent):
        device = _("an iPad")
    elif "iPhone" in agent:
        device = _("an iPhone")
    elif "CrOS" in agent:
        device = _("a Chromebook")
    elif "Android" in agent:
        device = _("an Android phone") if "Mobile" in agent else _("an Android tablet")
    elif "Windows" in agent:
        device = _("a Windows computer")
    elif "Macintosh" in agent:
        device = _("a Mac")
    elif re.search(r"Linux|X11", agent):
        device = _("a Linux computer")
    else:
        device = None
    if browser and device:
        # Translators: e.g. "Chrome on a Chromebook".
        return _("%(browser)s on %(device)s") % {"browser": browser, "device": device}
    if device:
        return device[0].upper() + device[1:]
    return browser or _("Unknown device")
