"""What the portal's console log handler writes, read back by tests (plain or JSON lines)."""

import io
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager

from ops.log_format import JsonFormatter, PlainFormatter


class ConsoleOutput:
    """The text the console handler wrote while capturing."""

    def __init__(self, stream: io.StringIO) -> None:
        self.stream = stream

    @property
    def text(self) -> str:
        return self.stream.getvalue()

    def json_lines(self) -> list[dict]:
        """Every line as the JSON object it is (the JSON format only)."""
        return [json.loads(line) for line in self.text.splitlines() if line.startswith("{")]

    def lines_of(self, logger: str) -> list[dict]:
        return [line for line in self.json_lines() if line["logger"] == logger]


def console_handler() -> logging.Handler:
    """Return the handler LOGGING sets up for the portal's loggers (portal.settings)."""
    return next(h for h in logging.getLogger("portal").handlers if h.name == "console")


@contextmanager
def console_output(log_format: str = "json") -> Iterator[ConsoleOutput]:
    """Capture what the console handler writes meanwhile, in the given format."""
    handler = console_handler()
    stream = io.StringIO()
    formatter = handler.formatter
    handler.setFormatter(JsonFormatter() if log_format == "json" else PlainFormatter())
    previous = handler.setStream(stream)
    try:
        yield ConsoleOutput(stream)
    finally:
        handler.setStream(previous)
        handler.setFormatter(formatter)
