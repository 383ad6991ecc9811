"""Which answer pictures are ready, and where the portal serves them."""

from collections.abc import Iterable
from hashlib import sha256

from django.urls import reverse

from pictures.models import Picture


def address_hash(address: str) -> str:
    """Return the key a picture is kept under: the SHA-256 of its upstream address."""
    return sha256(address.encode()).hexdigest()


def picture_urls(addresses: Iterable[str]) -> dict[str, str]:
    """Return the portal's own address of each ready picture, by its upstream address."""
    by_hash = {address_hash(address): address for address in addresses}
    if not by_hash:
        return {}
    ready = Picture.objects.filter(address_hash__in=by_hash, state=Picture.State.READY).values_list(
        "address_hash", "digest"
    )
    return {
        by_hash[key]: reverse("pictures:picture", kwargs={"digest": digest})
        for key, digest in ready
    }


def pictures_waiting(addresses: Iterable[str]) -> bool:
    """Return whether any of these pictures may still arrive soon (not yet kept, or pending)."""
    keys = {address_hash(address) for address in addresses}
    if not keys:
        return False
    settled = Picture.objects.filter(address_hash__in=keys).exclude(state=Picture.State.PENDING)
    return settled.count() < len(keys)


def pictures_unasked(addresses: Iterable[str]) -> bool:
    """Return whether any of these pictures has no row: never asked for, or the asking failed."""
    keys = {address_hash(address) for address in addresses}
    if not keys:
        return False
    return Picture.objects.filter(address_hash__in=keys).count() < len(keys)
