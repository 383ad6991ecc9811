"""How log lines look: a readable line (the default) or one JSON object (LOG_FORMAT=json).

Both carry the request id (ops.request_context.RequestIdLogFilter) and both mask secrets:
the values of secret settings (SECRET_KEY, PARTNER_API_KEY, METRICS_TOKEN, mail and database
passwords) and, on a record about a request (django.request's 500s), its cookies (the session
id) and sensitive form fields, wherever they appear, tracebacks and exception messages included.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

MASK = "********"
# Shorter values are not masked: masking "a" would blot out every word.
MIN_MASKED_LENGTH = 6
# Settings that hold a secret (SECRET_KEY, its FALLBACKS, PARTNER_API_KEY, METRICS_TOKEN,
# EMAIL_HOST_PASSWORD...); database and cache passwords are read from their own settings.
SECRET_SETTING = re.compile(r"(KEY|TOKEN|PASSWORD|SECRET)(_FALLBACKS)?$")
# Form fields never logged, whatever the view declared.
SECRET_FIELD = re.compile(r"pass|secret|token|key|code|csrf", re.IGNORECASE)
# The attributes every LogRecord has; anything else was passed as `extra` and is logged.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message",
    "asctime",
    "request_id",
    "request",  # django.request's HttpRequest: never dumped
    "server_time",
    "status_code",
}

_secret_values: tuple[str, ...] | None = None


@receiver(setting_changed)
def _forget_secrets(**kwargs: object) -> None:
    global _secret_values
    _secret_values = None


def setting_secrets() -> tuple[str, ...]:
    """Return the values of secret settings, longest first (worked out once per settings)."""
    global _secret_values
    if _secret_values is None:
        values: set[str] = set()
        for name in dir(settings):
            if name.isupper() and SECRET_SETTING.search(name):
                _collect(getattr(settings, name, None), values)
        for database in settings.DATABASES.values():
            _collect(database.get("PASSWORD"), values)
        for cache in settings.CACHES.values():
            _collect(_url_password(str(cache.get("LOCATION", ""))), values)
        _secret_values = tuple(sorted(values, key=len, reverse=True))
    return _secret_values


def _collect(value: Any, into: set[str]) -> None:
    if isinstance(value, str) and len(value) >= MIN_MASKED_LENGTH:
        into.add(value)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect(item, into)


def _url_password(url: str) -> str | None:
    match = re.match(r"\w+://[^:/@]*:([^@/]+)@", url)
    return match.group(1) if match else None


def request_secrets(record: logging.LogRecord) -> list[str]:
    """Return the cookie values and sensitive form fields of the request a record is about."""
    request = getattr(record, "request", None)
    values: set[str] = set()
    if request is None:
        return []
    try:
        _collect(list(request.COOKIES.values()), values)
        post = request.POST if request.method == "POST" else {}
        for name in post:
            if SECRET_FIELD.search(name):
                _collect(post.getlist(name), values)
    except Exception:  # noqa: S110 - an unreadable body must not stop the error being logged
        pass
    return sorted(values, key=len, reverse=True)


def secrets_for(record: logging.LogRecord) -> tuple[str, ...]:
    """Return every value that must not appear in a record's line."""
    return (*request_secrets(record), *setting_secrets())


def mask_secrets(text: str, secrets: tuple[str, ...]) -> str:
    """Replace every secret value in a formatted line with a mask."""
    for value in secrets:
        if value in text:
            text = text.replace(value, MASK)
    return text


class PlainFormatter(logging.Formatter):
    """time level logger [request id] message, with the traceback below; secrets masked."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        if not hasattr(record, "request_id"):
            record.request_id = "-"
        return mask_secrets(super().format(record), secrets_for(record))


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, request_id, message, extras, exc_info."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "request_id": getattr(record, "request_id", "-"),
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                line[key] = value if isinstance(value, int | float | bool | None) else str(value)
        if record.exc_info:
            line["exc_info"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exc_info"] = record.exc_text
        if record.stack_info:
            line["stack_info"] = self.formatStack(record.stack_info)
        # Masked before encoding: JSON's escapes would hide a secret holding a quote.
        secrets = secrets_for(record)
        for key, value in line.items():
            if isinstance(value, str):
                line[key] = mask_secrets(value, secrets)
        return json.dumps(line, ensure_ascii=False)
