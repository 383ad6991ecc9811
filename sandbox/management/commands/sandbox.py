"""Serve the sandbox upstream in the foreground: `python manage.py sandbox --port 8001`."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from sandbox.server import SandboxState, base_url_of, make_sandbox_server


class Command(BaseCommand):
    """Run the stand-in Learner Assessment Partner API until Ctrl-C."""

    help = "Serve the sandbox upstream (a stand-in for the Partner API) until Ctrl-C."
    # The sandbox depends on none of the portal's apps, so a half-built portal must not stop it.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        """Declare the host, port, key and sequence length options."""
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

    def handle(self, *args: Any, **options: Any) -> None:
        """Bind, print the base URL (never the key) and serve until interrupted."""
        api_key = options["api_key"] or settings.PARTNER_API_KEY
        state = SandboxState(assessments_per_learner=options["assessments_per_learner"])
        host, port = options["host"], options["port"]
        try:
            server = make_sandbox_server(host, port, api_key=api_key, state=state)
        except OSError as error:
            raise CommandError(f"Cannot listen on {host}:{port}: {error.strerror}") from None
        self.stdout.write(f"Sandbox upstream serving at {base_url_of(server)}")
        self.stdout.write("Quit with Ctrl-C.")
        # Flush now: under `make run` stdout is often a pipe, which would hold the line back.
        self.stdout.flush()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            self.stdout.write("Sandbox stopped.")
        finally:
            server.server_close()
