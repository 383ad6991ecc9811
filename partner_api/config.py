"""The process's partner API client, built from Django settings, and its upstream's status.

Owns where the client's options come from (PARTNER_API_* settings, each read from the
environment by portal.settings), the one cached client of the process (rebuilt when the
settings change), and upstream_status(), which pages and banners ask without any I/O.
"""

from __future__ import annotations

import threading
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from partner_api.client import (
    DEFAULT_TIMEOUT,
    PartnerApiClient,
    _breaker_key,
    _normalise_timeout,
)
from partner_api.resilience import (
    DEFAULT_BACKOFF,
    DEFAULT_BACKOFF_CAP,
    DEFAULT_BREAKER_COOLDOWN,
    DEFAULT_BREAKER_THRESHOLD,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_RETRY_AFTER_CAP,
    DEFAULT_RETRY_BUDGET,
    UpstreamStatus,
    existing_breaker,
    status_of,
)

__all__ = ["CLIENT_SETTINGS", "get_client", "upstream_status"]

# Each client option and the setting (and environment variable) it comes from.
CLIENT_SETTINGS = {
    "retry_budget": ("PARTNER_API_RETRY_BUDGET", DEFAULT_RETRY_BUDGET),
    "max_attempts": ("PARTNER_API_RETRY_MAX_ATTEMPTS", DEFAULT_MAX_ATTEMPTS),
    "backoff": ("PARTNER_API_RETRY_BACKOFF", DEFAULT_BACKOFF),
    "backoff_cap": ("PARTNER_API_RETRY_BACKOFF_CAP", DEFAULT_BACKOFF_CAP),
    "retry_after_cap": ("PARTNER_API_RETRY_AFTER_CAP", DEFAULT_RETRY_AFTER_CAP),
    "breaker_threshold": ("PARTNER_API_BREAKER_THRESHOLD", DEFAULT_BREAKER_THRESHOLD),
    "breaker_cooldown": ("PARTNER_API_BREAKER_COOLDOWN", DEFAULT_BREAKER_COOLDOWN),
}

_cached_client: tuple[tuple[Any, ...], PartnerApiClient] | None = None
_cache_lock = threading.Lock()


def get_client() -> PartnerApiClient:
    """Return the process's client for the configured upstream, rebuilt if settings changed."""
    global _cached_client
    base_url = settings.PARTNER_API_BASE_URL
    api_key = settings.PARTNER_API_KEY
    timeout = getattr(settings, "PARTNER_API_TIMEOUT", DEFAULT_TIMEOUT)
    options = {
        option: getattr(settings, name, default)
        for option, (name, default) in CLIENT_SETTINGS.items()
    }
    with _cache_lock:
        try:
            key = (base_url, api_key, _normalise_timeout(timeout), *options.items())
            if _cached_client is not None and _cached_client[0] == key:
                return _cached_client[1]
            client = PartnerApiClient(base_url, api_key, timeout, **options)
        except ValueError as exc:
            raise ImproperlyConfigured(f"PARTNER_API_* settings: {exc}") from None
        # The old client is left to the garbage collector: another thread may still use it.
        # Its circuit breaker lives on: it belongs to the upstream, not to the client.
        _cached_client = (key, client)
        return client


def upstream_status(base_url: str | None = None) -> UpstreamStatus:
    """Say whether calls to the configured upstream (or `base_url`) fail fast; never does I/O."""
    if base_url is None:
        base_url = settings.PARTNER_API_BASE_URL
    try:
        breaker = existing_breaker(_breaker_key(base_url))
    except ValueError:  # a broken setting: get_client() reports it, a banner should not
        breaker = None
    return status_of(breaker)
