"""Every URL name of the portal with its path parameters, read from the URLconf."""

from django.urls import URLResolver, get_resolver


def portal_urls() -> list[tuple[str, list[str]]]:
    """Return each URL pattern's name and path parameters, walking the whole URLconf."""
    found: list[tuple[str, list[str]]] = []

    def walk(patterns, namespace: str, params: list[str]) -> None:
        for entry in patterns:
            names = params + list(entry.pattern.regex.groupindex)
            if isinstance(entry, URLResolver):
                if str(entry.pattern) == "admin/":
                    continue  # Django's own pages: the admin tests of tests/test_access.py
                inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
                walk(entry.url_patterns, inner, names)
            elif entry.name:
                found.append((f"{namespace}{entry.name}", names))
            else:
                found.append((f"<unnamed {namespace}{entry.pattern}>", names))

    walk(get_resolver().url_patterns, "", [])
    return found
