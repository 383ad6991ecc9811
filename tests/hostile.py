"""Hostile HTML vectors from tests/data, and the check that sanitized HTML holds nothing active."""

import json
import re
from html.parser import HTMLParser
from pathlib import Path

ALLOWED_TAGS = {"p", "ul", "ol", "li", "strong", "em", "b", "i", "br", "a"}
ALLOWED_SCHEMES = ("http:", "https:", "mailto:")
REL = "noopener noreferrer"
RAW_TAG = re.compile(r"<\s*(/?)\s*([^\s/>]*)")


class _Audit(HTMLParser):
    """Record every tag, attribute, text run and oddity of a sanitized fragment."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.start_tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.end_tags: list[str] = []
        self.text: list[str] = []
        self.oddities: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.start_tags.append((tag, attrs))

    def handle_startendtag(self, tag, attrs):
        self.start_tags.append((tag, attrs))

    def handle_endtag(self, tag):
        self.end_tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        self.oddities.append(f"comment {data!r}")

    def handle_decl(self, decl):
        self.oddities.append(f"declaration {decl!r}")

    def handle_pi(self, data):
        self.oddities.append(f"processing instruction {data!r}")

    def unknown_decl(self, data):
        self.oddities.append(f"unknown declaration {data!r}")


def audit(fragment: str) -> _Audit:
    """Parse a sanitized fragment into its tags, attributes, text and oddities."""
    parser = _Audit()
    parser.feed(fragment)
    parser.close()
    return parser


def assert_no_active_content(output: str) -> None:
    """Fail unless the output holds only allowlisted tags, safe links and inert text."""
    parsed = audit(output)
    assert not parsed.oddities, parsed.oddities
    for tag, attrs in parsed.start_tags:
        assert tag in ALLOWED_TAGS, f"<{tag}> survived in {output!r}"
        names = [name for name, _ in attrs]
        if tag != "a":
            assert not names, f"<{tag}> kept attributes {names} in {output!r}"
            continue
        assert set(names) <= {"href", "rel"}, f"<a> kept attributes {names} in {output!r}"
        assert len(names) == len(set(names)), f"duplicate attributes in {output!r}"
        attributes = dict(attrs)
        assert attributes.get("rel") == REL, output
        href = attributes.get("href")
        if href is not None:
            assert href.lower().startswith(ALLOWED_SCHEMES), f"href {href!r} in {output!r}"
    for tag in parsed.end_tags:
        assert tag in ALLOWED_TAGS, f"</{tag}> survived in {output!r}"
    # Text is serialized with < escaped, so every raw "<" left must open an allowlisted tag;
    # this check does not depend on how html.parser recovers from odd markup.
    for _, name in RAW_TAG.findall(output):
        assert name.lower() in ALLOWED_TAGS, f"raw <{name} in {output!r}"
    assert "<script" not in output.lower()


# Hostile vectors, one per entry of tests/data/hostile_vectors.json (with a category each):
# every one's sanitized output must pass the no-active-content check (tests/test_sanitize.py).
# The same corpus goes through every upstream field in tests/test_hostile_upstream.py and into
# a real browser in tests/test_browser_inert.py.
CORPUS_FILE = Path(__file__).parent / "data" / "hostile_vectors.json"
HOSTILE_CORPUS: list[dict[str, str]] = json.loads(CORPUS_FILE.read_text())
HOSTILE = [entry["vector"] for entry in HOSTILE_CORPUS]
