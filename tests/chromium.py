"""Where Debian's Chromium is, how browser tests launch it, and what happens when it is missing."""

import importlib.util
import os
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def require_chromium() -> None:
    """Skip the test when Chromium or Playwright is missing (fail it if CI requires a browser)."""
    problem = None
    if not CHROMIUM.exists():
        problem = "Chromium not installed: apt-get install chromium"
    elif importlib.util.find_spec("playwright") is None:
        problem = "Playwright not installed: pip install '.[test]'"
    if problem:
        if os.environ.get("REQUIRE_BROWSER"):
            pytest.fail(f"{problem} (REQUIRE_BROWSER is set, so browser tests must run)")
        pytest.skip(problem)
