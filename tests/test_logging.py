"""What the portal's own code logs reaches the console, whichever app it lives in."""

import logging

from django.apps import apps
from django.conf import settings

# The stand-in upstream writes its own access log; it is not the portal.
NOT_THE_PORTAL = {"sandbox"}


def portal_apps() -> list[str]:
    """Return the names of the installed apps that live in this repository."""
    root = str(settings.BASE_DIR)
    return [
        config.name
        for config in apps.get_app_configs()
        # The virtualenv may live in the repository too: its packages are not ours.
        if config.path.startswith(root)
        and "site-packages" not in config.path
        and config.name not in NOT_THE_PORTAL
    ]


def test_every_app_of_the_portal_logs_its_info_lines_to_the_console():
    assert {"imports", "privacy", "followups"} <= set(portal_apps())
    for name in portal_apps():
        logger = logging.getLogger(f"{name}.services")
        assert logger.isEnabledFor(logging.INFO), name
        handlers = [h for parent in (logger, logger.parent) for h in parent.handlers]
        assert any(isinstance(h, logging.StreamHandler) for h in handlers), name
