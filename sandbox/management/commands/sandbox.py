"""Serve the sandbox upstream in the foreground: `python manage.py sandbox --port 8001`.

Its state is kept in `.sandbox-state.json` in the project root (see --state-file), so learners
registered through the portal are still known after a restart. Faults can be injected from the
start (`--fault view-assessment=503:times=2 --seed 7`) or at run time through the control API
at /_sandbox/faults (see `manage.py sandbox_faults`).
"""

from __future__ import annotations

import argparse
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import (
    CommandError,
    CommandParser,
)

from sandbox.app import CONTROL_PATH
from sandbox.faults import FaultError, parse_fault_spec
from sandbox.management.fault_help import FaultSyntaxHelpCommand
from sandbox.server import SandboxServer, base_url_of, make_sandbox_server
from sandbox.state import SandboxState


def fault_spec(value: str) -> str:
    """Check a --fault value for argparse, which shows the message of a bad one."""
    try:
        parse_fault_spec(value)
    except FaultError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return value


class Command(FaultSyntaxHelpCommand):
    """Run the stand-in Learner Assessment Partner API until Ctrl-C."""

    help = "Serve the sandbox upstream (a stand-in for the Partner API) until Ctrl-C."
    # The sandbox depends on none of the portal's apps, so a half-built portal must not stop it.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        """Declare the host, port, key, sequence length and state file options."""
        parser.add_argument("--host", default="127.0.0.1", help="address to bind")
        parser.add_argument("--port", type=int, default=8001, help="port to bind")
        parser.add_argument(
            "--api-key",
            default=None,
            help="apikey the sandbox accepts (default: settings.PARTNER_API_KEY)",
        )
        parser.add_argument(
            "--assessments-per-learner",
            type=int,
            default=3,
            help="how many assessments each learner is offered in turn",
        )
        parser.add_argument(
            "--state-file",
            default=None,
            metavar="PATH",
            help="file the state is loaded from and saved to after every change "
            "(default: .sandbox-state.json in the project root; '' keeps it in memory only)",
        )
        parser.add_argument(
            "--no-persist",
            action="store_true",
            help="keep the state in memory only (the same as --state-file '')",
        )
        parser.add_argument(
            "--fault",
            action="append",
            default=[],
            type=fault_spec,
            metavar="ENDPOINT=KIND[:OPT=VALUE,...]",
            help="inject a fault (repeatable; first matching rule wins; syntax below)",
        )
        parser.add_argument(
            "--seed",
            type=int,
            default=None,
            help="seed for the rate=P faults, so a run is repeatable (default: a random one, "
            "printed at start)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        """Bind, print the base URL (never the key) and serve until interrupted."""
        api_key = options["api_key"] or settings.PARTNER_API_KEY
        state_file = _state_file(options["state_file"], no_persist=options["no_persist"])
        state = SandboxState(
            assessments_per_learner=options["assessments_per_learner"],
            state_file=state_file,
            fault_seed=options["seed"],
        )
        for spec in options["fault"]:
            state.faults.add_spec(spec)
        warning = state.load()
        if warning:
            self.stderr.write(self.style.WARNING(f"Warning: {warning}"))
        host, port = options["host"], options["port"]
        try:
            server = make_sandbox_server(host, port, api_key=api_key, state=state)
        except OSError as error:
            raise CommandError(f"Cannot listen on {host}:{port}: {error.strerror}") from None
        restore_sigint = _stop_on_ctrl_c()
        try:
            self._announce(server, state, state_file)
            server.serve_forever()
        except KeyboardInterrupt:
            self.stdout.write("Sandbox stopped.")
        finally:
            server.server_close()
            restore_sigint()

    def _announce(
        self, server: SandboxServer, state: SandboxState, state_file: Path | None
    ) -> None:
        """Print where the sandbox serves, its state file and its fault rules (never the key)."""
        self.stdout.write(f"Sandbox upstream serving at {base_url_of(server)}")
        if state_file is None:
            self.stdout.write("State is kept in memory only.")
        else:
            count = len(state.learners)
            loaded = f"{count} learner{'' if count == 1 else 's'} loaded"
            self.stdout.write(f"State is kept in {state_file} ({loaded}).")
        host_port = base_url_of(server).split("/plapi/", 1)[0]
        rules = state.faults.rules()
        self.stdout.write(
            f"Fault control at {host_port}{CONTROL_PATH} (seed {state.faults.seed}); "
            f"{len(rules)} fault rule{'' if len(rules) == 1 else 's'} active."
        )
        for rule in rules:
            self.stdout.write(f"  #{rule['id']} {rule['spec']}")
        self.stdout.write("Quit with Ctrl-C.")
        # Flush now: under `make run` stdout is often a pipe, which would hold the line back.
        self.stdout.flush()


def _stop_on_ctrl_c() -> Callable[[], object]:
    """Make Ctrl-C (SIGINT) stop the sandbox however it was started; return how to undo it."""
    # A process started in the background by a script (`make test &`, a CI step) inherits
    # SIGINT as ignored, and Python then leaves it ignored instead of raising
    # KeyboardInterrupt: Ctrl-C, the one way to stop the sandbox, did nothing at all.
    if threading.current_thread() is not threading.main_thread():
        return lambda: None  # only the main thread may set handlers (call_command in a thread)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    if previous is None:  # set outside Python: nothing to put back
        return lambda: None
    return lambda: signal.signal(signal.SIGINT, previous)


def _state_file(option: str | None, *, no_persist: bool) -> Path | None:
    """Return the state file to use: the option, the default in BASE_DIR, or None for memory."""
    if no_persist or option == "":
        return None
    if option is None:
        return Path(settings.BASE_DIR) / ".sandbox-state.json"
    return Path(option)
