"""List, add or clear the fault rules of a running sandbox, through its control API.

python manage.py sandbox_faults list
python manage.py sandbox_faults add view-assessment=503:times=2 results=latency:ms=300
python manage.py sandbox_faults remove 3
python manage.py sandbox_faults seed 7
python manage.py sandbox_faults --url http://127.0.0.1:8001 clear
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.management.base import (
    CommandError,
    CommandParser,
)

from sandbox.app import CONTROL_PATH
from sandbox.faults import FaultError, parse_fault_spec
from sandbox.management.fault_help import FaultSyntaxHelpCommand

ACTIONS = ("list", "add", "remove", "clear", "seed")


class Command(FaultSyntaxHelpCommand):
    """Talk to the fault control API of a running sandbox (never to a real upstream)."""

    help = "List, add, remove or clear the fault rules of a running sandbox upstream."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        """Declare the sandbox's address and key, the action and its arguments."""
        parser.add_argument(
            "--url",
            default=None,
            help="the sandbox's address, e.g. http://127.0.0.1:8001; any path is ignored "
            "(default: the host of settings.PARTNER_API_BASE_URL)",
        )
        parser.add_argument(
            "--api-key",
            default=None,
            help="apikey the sandbox accepts (default: settings.PARTNER_API_KEY)",
        )
        parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait")
        parser.add_argument("--json", action="store_true", help="print the listing as JSON")
        parser.add_argument("action", choices=ACTIONS, help="what to do")
        parser.add_argument(
            "arguments",
            nargs="*",
            metavar="SPEC|ID|SEED",
            help="fault specs for add, a rule id for remove, an integer for seed",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        """Check the arguments, call the control API and print what it says."""
        action, arguments = options["action"], options["arguments"]
        control = _control_url(options["url"] or settings.PARTNER_API_BASE_URL)
        client = _ControlClient(
            control, options["api_key"] or settings.PARTNER_API_KEY, options["timeout"]
        )
        if action in ("list", "clear") and arguments:
            raise CommandError(f"{action} takes no arguments")
        if action == "list":
            listing = client.call("GET")
            if options["json"]:
                self.stdout.write(json.dumps(listing, indent=2))
            else:
                self._print_rules(listing)
        elif action == "clear":
            cleared = client.call("DELETE")["cleared"]
            self.stdout.write(f"Cleared {cleared} fault rule{'' if cleared == 1 else 's'}.")
        elif action == "add":
            if not arguments:
                raise CommandError("add needs at least one ENDPOINT=KIND[:OPTION=VALUE,...]")
            bodies = []
            for spec in arguments:  # all checked before any is sent
                try:
                    endpoint, kind, rule_options = parse_fault_spec(spec)
                except FaultError as error:
                    raise CommandError(str(error)) from None
                bodies.append({"endpoint": endpoint, "kind": kind, **rule_options})
            for body in bodies:
                rule = client.call("POST", body=body)["rule"]
                self.stdout.write(f"Added #{rule['id']} {rule['spec']}")
        elif action == "remove":
            rule_id = _single_integer(action, arguments)
            client.call("DELETE", f"/{rule_id}")
            self.stdout.write(f"Removed #{rule_id}.")
        else:
            seed = _single_integer(action, arguments)
            client.call("POST", "/seed", body={"seed": seed})
            self.stdout.write(f"Seed set to {seed}.")

    def _print_rules(self, listing: dict[str, Any]) -> None:
        """Print the rules one a line, in the order they are tried."""
        rules = listing["rules"]
        if not rules:
            self.stdout.write(f"No fault rules (seed {listing['seed']}).")
            return
        self.stdout.write(
            f"{len(rules)} fault rule{'' if len(rules) == 1 else 's'} (seed {listing['seed']}):"
        )
        for rule in rules:
            remaining = "" if rule["remaining"] is None else f", {rule['remaining']} to go"
            self.stdout.write(
                f"  #{rule['id']} {rule['spec']}  (applied {rule['applied']}{remaining})"
            )


class _ControlClient:
    """A minimal client of the sandbox's control API (the standard library only)."""

    def __init__(self, url: str, api_key: str, timeout: float) -> None:
        self.url = url
        self.api_key = api_key
        self.timeout = timeout

    def call(self, method: str, suffix: str = "", body: Any = None) -> Any:
        """Send one request and return its JSON answer, or raise CommandError."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(  # noqa: S310 (_control_url allows http(s) only)
            self.url + suffix, data=data, method=method
        )
        request.add_header("apikey", self.api_key)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise CommandError(_refusal(error)) from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise CommandError(f"Cannot reach the sandbox at {self.url}: {reason}") from None
        except ValueError:
            raise CommandError(f"{self.url} did not answer JSON; is it a sandbox?") from None


def _control_url(url: str) -> str:
    """Return the control API's URL on the host of a sandbox URL (any path is dropped)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CommandError(f"--url must be an http(s) address like http://127.0.0.1:8001: {url!r}")
    return f"{parts.scheme}://{parts.netloc}{CONTROL_PATH}"


def _refusal(error: urllib.error.HTTPError) -> str:
    """Return a readable message for a refusal of the control API."""
    try:
        message = json.loads(error.read())["error"]
    except (ValueError, KeyError, TypeError):
        message = error.reason
    if error.code == 401:
        return f"The sandbox refused the apikey ({message})."
    if error.code == 404 and message == "Not found":
        return f"No fault control API at {error.filename}; is it a sandbox?"
    return f"The sandbox refused: {message} (HTTP {error.code})"


def _single_integer(action: str, arguments: list[str]) -> int:
    """Return the one integer argument an action takes, or raise CommandError."""
    if len(arguments) != 1 or not arguments[0].lstrip("-").isdigit():
        raise CommandError(f"{action} takes one integer, got {' '.join(arguments) or 'none'}")
    return int(arguments[0])
