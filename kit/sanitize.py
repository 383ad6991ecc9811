"""Clean upstream HTML fragments under one allowlist (docs/partner-api.md, "Upstream HTML").

This is the only module that imports bleach. bleach is in maintenance-only mode, so the
policy is kept small and in one place, ready to move to nh3; the Content-Security-Policy
without inline script is the second wall.
"""

import re

import bleach
from bleach.html5lib_shim import Filter

ALLOWED_TAGS = frozenset({"p", "ul", "ol", "li", "strong", "em", "b", "i", "br", "a"})
ALLOWED_ATTRIBUTES = {"a": ["href"]}
ALLOWED_PROTOCOLS = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer"

# Elements whose text must go with them: `strip=True` alone would keep a script's source or a
# style sheet as visible text. They are let through the sanitizer only so that the filter
# below can see where they start and end, and then dropped whole.
DROPPED_WITH_CONTENT = frozenset(
    {
        "script", "style", "template", "noscript", "iframe", "object", "embed", "svg", "math",
        "textarea", "title", "xmp", "noembed", "noframes", "plaintext", "select", "option",
        "head", "applet", "frameset", "frame",
    }
)  # fmt: skip


class _DropDangerousContent(Filter):
    """Drop the DROPPED_WITH_CONTENT elements with everything inside; set rel on links."""

    def __iter__(self):
        depth = 0
        for token in super().__iter__():
            kind = token["type"]
            name = token.get("name")
            if name in DROPPED_WITH_CONTENT and kind in ("StartTag", "EndTag", "EmptyTag"):
                if kind == "StartTag":
                    depth += 1
                elif kind == "EndTag":
                    depth = max(depth - 1, 0)
                continue
            if depth:
                continue
            if name == "a" and kind == "StartTag":
                attrs = dict(token.get("data", {}))
                href = attrs.get((None, "href"), "")
                # bleach lets scheme-less (relative) links through; only absolute links
                # with an allowed scheme may point anywhere from upstream text.
                if href.split(":", 1)[0].lower() not in ALLOWED_PROTOCOLS or ":" not in href:
                    attrs.pop((None, "href"), None)
                attrs[(None, "rel")] = LINK_REL
                token["data"] = attrs
            yield token


# A tag cut off at the very end ("<img src=x onerror=...") is dropped by browsers, but the
# parser would keep it as text: remove it so it never shows up as visible markup.
_UNFINISHED_TAG_AT_END = re.compile(r"<[A-Za-z!/?][^<>]*\Z")

_cleaner = bleach.sanitizer.Cleaner(
    tags=ALLOWED_TAGS | DROPPED_WITH_CONTENT,
    attributes=ALLOWED_ATTRIBUTES,
    protocols=ALLOWED_PROTOCOLS,
    strip=True,
    strip_comments=True,
    filters=[_DropDangerousContent],
)


def sanitize_html(fragment: str | None) -> str:
    """Return the fragment with everything outside the allowlist removed."""
    if not fragment:
        return ""
    return _cleaner.clean(_UNFINISHED_TAG_AT_END.sub("", fragment)).strip()
