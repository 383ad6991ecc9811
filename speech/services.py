"""Read-aloud audio wanted, made and kept: the rules of the speech room."""

from collections.abc import Iterable


def recordings_wanted(texts: Iterable[str]) -> None:
    """Keep a row for each text in each of the portal's languages and queue its making."""
    # Built by the speech work of issue 31.
    return None
