"""Answer pictures: which addresses the portal fetches, and each file checked by decoding."""

import io
from hashlib import sha256

import pytest
import responses
from PIL import Image, PngImagePlugin

import partner_api.pictures
from kit.addresses import is_public_ip
from partner_api.assumptions import API_KEY_HEADER
from partner_api.pictures import picture_fetchable
from pictures.models import Picture
from pictures.selectors import picture_urls
from pictures.services import picture_fetch
from tests.picture_support import (
    CDN,
    UPSTREAM,
    UPSTREAM_KEY,
    Failed,
    Ready,
    decoded,
    fetched,
    kept_row,
    noise_png,
    picture_bytes,
    png_declaring,
    pretended_resolution,
)


@pytest.fixture(autouse=True)
def pretend_dns(monkeypatch):
    """Answer every name with a public address (or a listed private one), never asking DNS."""
    monkeypatch.setattr(partner_api.pictures, "resolve_host", pretended_resolution)


@pytest.fixture(autouse=True)
def upstream_origin(settings):
    settings.PARTNER_API_BASE_URL = UPSTREAM
    settings.PARTNER_API_KEY = UPSTREAM_KEY


# What the portal fetches ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "fetchable"),
    [
        (f"{CDN}/moon.png", True),
        ("https://cdn.example:443/moon.png", True),
        ("https://api.partner.example/icons/moon.png", True),  # the upstream's own origin
        ("http://cdn.example/moon.png", False),  # plain http elsewhere
        ("https://cdn.example:8443/moon.png", False),  # another port
        ("https://user:secret@cdn.example/moon.png", False),  # a credential in the address
        ("https://cdn.example@10.0.0.5/moon.png", False),
        ("https://cdn.example\\@10.0.0.5/moon.png", False),  # parsers disagree on its host
        ("https://10.0.0.5/moon.png", False),  # the school's own network
        ("https://127.0.0.1/moon.png", False),
        ("https://[::1]/moon.png", False),
        ("https://[64:ff9b::a00:1]/moon.png", False),  # NAT64 into the school's network
        ("https://[2002:a00:1::1]/moon.png", False),  # 6to4 likewise
        ("https://169.254.169.254/latest/meta-data", False),  # a cloud's metadata service
        ("https://93.184.216.34/moon.png", True),
        ("ftp://cdn.example/moon.png", False),
        ("javascript:alert(1)", False),
        ("moon", False),  # a known icon name: shown as its symbol, nothing fetched
        ("a picture of the moon", False),
        (" https://cdn.example/moon.png", False),
        ("https:///moon.png", False),
        ("", False),
    ],
)
def test_only_public_https_addresses_and_the_upstreams_own_are_fetched(address, fetchable):
    assert picture_fetchable(address) is fetchable


@pytest.mark.parametrize(
    ("ip", "public"),
    [
        ("93.184.216.34", True),
        ("2606:4700::1111", True),
        ("::ffff:93.184.216.34", True),  # IPv4-mapped, a public IPv4 inside
        ("64:ff9b::5db8:d822", True),  # NAT64 of a public IPv4
        ("2002:5db8:d822::1", True),  # 6to4 of a public IPv4
        ("10.0.0.1", False),
        ("169.254.169.254", False),
        ("fe80::1%eth0", False),
        ("::ffff:10.0.0.1", False),
        ("64:ff9b::a00:1", False),  # NAT64: the translator reaches 10.0.0.1
        ("64:ff9b::7f00:1", False),  # ... or 127.0.0.1
        ("64:ff9b:1::a00:1", False),  # local-use NAT64
        ("2002:a00:1::1", False),  # 6to4 of 10.0.0.1
        ("2002:7f00:1::1", False),  # 6to4 of 127.0.0.1
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", False),  # Teredo
        ("::a00:1", False),  # IPv4-compatible (deprecated)
    ],
)
def test_an_ipv6_address_wrapping_a_private_ipv4_one_is_not_public(ip, public):
    assert is_public_ip(ip) is public


def test_the_upstream_origin_may_be_plain_http_on_its_own_port(settings):
    settings.PARTNER_API_BASE_URL = "http://127.0.0.1:8001/plapi/v1/partners"
    assert picture_fetchable("http://127.0.0.1:8001/icons/sun.png")
    assert not picture_fetchable("http://127.0.0.1:8002/icons/sun.png")
    assert not picture_fetchable("https://127.0.0.1:8001/icons/sun.png")


# Checked by decoding --------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_png_is_kept_re_encoded_small_and_without_its_metadata():
    notes = PngImagePlugin.PngInfo()
    notes.add_text("Comment", "upstream-secret-note")
    original = picture_bytes("PNG", (600, 300), pnginfo=notes)

    picture = fetched(f"{CDN}/wide.png", original)

    assert picture.state == Ready
    assert (picture.content_type, picture.width, picture.height) == ("image/png", 256, 128)
    assert picture.digest == sha256(bytes(picture.image)).hexdigest()
    image = decoded(picture)
    assert (image.format, image.size) == ("PNG", (256, 128))
    assert b"upstream-secret-note" in original
    assert b"upstream-secret-note" not in bytes(picture.image)
    assert picture_urls([picture.address]) == {picture.address: f"/pictures/{picture.digest}"}


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", ["JPEG", "GIF", "WEBP"])
def test_jpeg_gif_and_webp_are_kept_as_png(fmt):
    picture = fetched(f"{CDN}/picture.{fmt.lower()}", picture_bytes(fmt), "image/whatever")

    assert picture.state == Ready, picture.last_error
    assert decoded(picture).format == "PNG"
    assert (picture.width, picture.height) == (40, 30)


@pytest.mark.django_db
def test_an_animation_keeps_its_first_frame():
    frames = [Image.new("RGB", (20, 20), colour) for colour in ((255, 0, 0), (0, 0, 255))]
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:])

    picture = fetched(f"{CDN}/blink.gif", out.getvalue(), "image/gif")

    assert picture.state == Ready
    assert decoded(picture).convert("RGB").getpixel((10, 10)) == (255, 0, 0)


SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script><circle r="4"/></svg>'
HTML = b"<!doctype html><html><body><script>alert(1)</script></body></html>"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "content_type", "reason"),
    [
        (SVG, "image/svg+xml", "not a PNG, JPEG, GIF or WebP"),
        (HTML, "image/png", "not a PNG, JPEG, GIF or WebP"),  # named .png, said to be PNG
        (noise_png()[:3000], "image/png", "not a PNG, JPEG, GIF or WebP"),
        (png_declaring(5000, 5000), "image/png", "too large a picture"),
        (png_declaring(100000, 100000), "image/png", "too large a picture"),
        (picture_bytes("BMP"), "image/png", "not a PNG, JPEG, GIF or WebP"),
        (picture_bytes("PNG") + b"\0" * 262144, "image/png", "larger than 256 KB"),
    ],
    ids=["svg", "html", "truncated", "huge", "bomb", "bmp", "too-big"],
)
def test_anything_but_a_readable_small_picture_is_refused(body, content_type, reason):
    picture = fetched(f"{CDN}/icon.png", body, content_type)

    assert picture.state == Failed
    assert reason in picture.last_error
    assert (picture.tries, bytes(picture.image), picture.digest) == (1, b"", "")
    assert picture_urls([picture.address]) == {}


@pytest.mark.django_db
def test_a_declared_length_past_the_limit_is_refused_before_reading(settings):
    settings.PICTURE_MAX_BYTES = 2048
    body = picture_bytes("PNG")
    picture = fetched(f"{CDN}/big.png", body, headers={"Content-Length": "5000000"})

    assert picture.state == Failed
    assert picture.last_error == "Not kept: it is larger than 2 KB."


@pytest.mark.django_db
def test_a_redirect_is_not_followed():
    address = f"{CDN}/moved.png"
    picture = kept_row(address)
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.get(address, status=302, headers={"Location": "https://10.0.0.5/inside.png"})
        elsewhere = mock.get("https://10.0.0.5/inside.png", body=picture_bytes("PNG"))
        picture_fetch(picture.pk)
        assert [call.request.url for call in mock.calls] == [address]
        assert elsewhere.call_count == 0

    picture.refresh_from_db()
    assert picture.state == Failed
    assert picture.last_error == "Not kept: it answered with a redirect, which is not followed."


@pytest.mark.django_db
@pytest.mark.parametrize("host", ["intranet.example", "sneaky.example"])
def test_a_name_resolving_to_a_private_address_is_refused_without_a_request(host):
    address = f"https://{host}/icon.png"
    picture = kept_row(address)
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.get(address, body=picture_bytes("PNG"), content_type="image/png")
        picture_fetch(picture.pk)
        assert len(mock.calls) == 0

    picture.refresh_from_db()
    assert picture.state == Failed
    assert picture.last_error == "Not kept: its host is not on the public internet."
    assert picture_urls([address]) == {}


@pytest.mark.django_db
def test_the_api_key_goes_only_to_the_upstreams_own_origin():
    own, other = "https://api.partner.example/icons/sun.png", f"{CDN}/sun.png"
    with responses.RequestsMock() as mock:
        mock.get(own, body=picture_bytes("PNG"), content_type="image/png")
        mock.get(other, body=picture_bytes("PNG"), content_type="image/png")
        for address in (own, other):
            picture_fetch(kept_row(address).pk)
        sent = {call.request.url: call.request.headers for call in mock.calls}

    assert sent[own][API_KEY_HEADER] == UPSTREAM_KEY
    assert API_KEY_HEADER not in sent[other]
    assert UPSTREAM_KEY not in str(sent[other])
    assert all(
        "Cookie" not in headers and "Authorization" not in headers for headers in sent.values()
    )
    assert Picture.objects.filter(state=Ready).count() == 2
