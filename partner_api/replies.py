"""What an upstream reply says besides its data: its error message, Retry-After and request id.

Owns reading those from a reply's body and headers, and making any text taken from the upstream
safe to show: the values the call must never echo (the API key, the learner id, a password) are
redacted, control characters folded and the length capped. Works on bytes and header mappings,
so it needs no HTTP library.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from partner_api.assumptions import ERROR_MESSAGE_FIELDS, REQUEST_ID_HEADERS
from partner_api.parsing import _CONTROL_CHARS

UPSTREAM_MESSAGE_LIMIT = 300
REDACTED = "[redacted]"

# Keys of structured error details that may echo the submitted input (passwords included).
_ECHO_KEYS = frozenset({"input", "ctx", "url", "value", "password"})


def _request_id(headers: Mapping[str, str], secrets: tuple[str, ...]) -> str | None:
    """Read the upstream's request id header, if any."""
    for header in REQUEST_ID_HEADERS:
        value = headers.get(header)
        if value:
            return _clean_text(value, 100, secrets) or None
    return None


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Parse Retry-After (seconds or an HTTP date) into seconds from now."""
    value = headers.get("Retry-After", "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if not math.isfinite(seconds):
        return None
    return max(seconds, 0.0)


def _upstream_message(content: bytes, secrets: tuple[str, ...]) -> str | None:
    """Take a short message from a JSON error body's error/message/detail, if it has one."""
    try:
        data = json.loads(content)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    for field in ERROR_MESSAGE_FIELDS:
        rendered = _render_message(data.get(field), depth=0)
        if rendered:
            return _clean_text(rendered, UPSTREAM_MESSAGE_LIMIT, secrets) or None
    return None


def _render_message(value: Any, depth: int) -> str:
    """Render a message, or a list/dict of validation details, as one short line."""
    if isinstance(value, str):
        return value
    if depth > 3:
        return ""
    if isinstance(value, list):
        return "; ".join(filter(None, (_render_message(item, depth + 1) for item in value[:10])))
    if isinstance(value, dict):
        text = value.get("msg") or value.get("message")
        if isinstance(text, str):  # {"loc": [...], "msg": "..."} and friends
            loc = value.get("loc")
            if isinstance(loc, list) and loc:
                return ".".join(str(part) for part in loc) + ": " + text
            return text
        parts = []
        for key, item in list(value.items())[:10]:
            if str(key) in _ECHO_KEYS:
                continue
            rendered = _render_message(item, depth + 1)
            if rendered:
                parts.append(f"{key}: {rendered}")
        return "; ".join(parts)
    return ""


def _clean_text(text: str, limit: int, secrets: tuple[str, ...]) -> str:
    """Redact secrets, fold control characters and whitespace, and truncate."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    text = " ".join(_CONTROL_CHARS.sub(" ", text).split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text
