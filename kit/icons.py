"""Answer icons: an upstream `Icon` is shown only if it is a known name (as a symbol)."""

# Known icon names and the symbol shown for each. The symbol is decorative (the answer text
# beside it says everything), so screen readers skip it.
KNOWN_ICONS = {
    # A rising bar, not circles: circles beside a radio button look like more radio buttons.
    "never": "▁",
    "rarely": "▂",
    "sometimes": "▄",
    "often": "▆",
    "always": "█",
    "smile": "☺",
    "frown": "☹",
    "neutral": "◌",
    "star": "★",
    "check": "✓",
    "cross": "✗",
    "moon": "☾",
    "sun": "☀",
    "book": "▤",
    "clock": "◷",
    "heart": "♥",
}


def icon_symbol(icon: str) -> str | None:
    """Return the symbol for a known icon name, or None."""
    return KNOWN_ICONS.get(icon.strip().lower())
