"""The portal's en-GB formats: the month's name in full where there is room, 24-hour times."""

# Django's own en_GB module supplies everything not set here (input formats, separators).
DATE_FORMAT = "j F Y"  # 3 February 2026
SHORT_DATE_FORMAT = "j M Y"  # 3 Feb 2026
DATETIME_FORMAT = "j F Y, H:i"  # 3 February 2026, 14:05
SHORT_DATETIME_FORMAT = "j M Y, H:i"  # 3 Feb 2026, 14:05
TIME_FORMAT = "H:i"
