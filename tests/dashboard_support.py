"""Readers of the dashboard's figures, shared by the tests of its class filter."""

import re
from html import unescape


def figures(response) -> dict[str, str]:
    """Return the headline figures of the page: label -> text shown."""
    pairs = re.findall(
        r'headline-count[^"]*">([^<]+)</span>\s*<span class="headline-label">(?:<a [^>]+>)?([^<]+)',
        response.content.decode(),
    )
    return {label: text for text, label in pairs}


def by_class(response) -> dict[str, list[str]]:
    """Return the "By class" table: class -> its cells."""
    table = response.content.decode().split('id="by-class-caption"')[1].split("</table>")[0]
    rows = re.findall(r'<tr><th scope="row">(.*?)</th>(.*?)</tr>', table)
    return {
        unescape(re.sub(r"<span.*?</span>|<[^>]+>", "", head)): re.findall(r"<td>(.*?)</td>", cells)
        for head, cells in rows
    }
