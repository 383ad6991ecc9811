"""The fault syntax in the help of both sandbox commands (`sandbox`, `sandbox_faults`)."""

import argparse
from typing import Any

from django.core.management.base import BaseCommand, CommandParser, DjangoHelpFormatter

from sandbox.faults import FAULT_SYNTAX_HELP


class _HelpFormatter(DjangoHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Django's help layout, keeping the line breaks of the fault syntax epilog."""


class FaultSyntaxHelpCommand(BaseCommand):
    """A command whose --help ends with the fault syntax, line breaks kept."""

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        """Add the fault syntax to the help."""
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.formatter_class = _HelpFormatter
        parser.epilog = FAULT_SYNTAX_HELP
        return parser
