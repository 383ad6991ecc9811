"""Bad input gets a clear answer: a form in a charset the portal cannot read, names that would
show reversed or not at all, and CSV downloads that say their charset."""

import pytest
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory

from ops.request_log import RequestLogMiddleware
from tests.log_capture import console_output

pytestmark = pytest.mark.django_db

FORM = "application/x-www-form-urlencoded"
RIGHT_TO_LEFT_OVERRIDE = "\u202e"
BIDI_MESSAGE = "This name holds a hidden character that changes the direction of the text"
INVISIBLE_MESSAGE = "This name is made only of invisible characters. Type it in letters."


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


# A form body in another charset ---------------------------------------------------------------


def sign_in_post(client: Client, charset: str):
    """POST the sign-in form, with its CSRF token, as Latin-1 bytes labelled with `charset`."""
    client.get("/accounts/login/")
    token = client.cookies["csrftoken"].value
    body = f"csrfmiddlewaretoken={token}&username=caf\xe9&password=wrong".encode("latin-1")
    return client.generic(
        "POST", "/accounts/login/", body, content_type=f"{FORM}; charset={charset}"
    )


@pytest.mark.parametrize("charset", ["latin-1", "utf-16", "no-such-charset"])
def test_a_form_in_a_charset_the_portal_cannot_read_is_a_clear_400_in_the_log(charset):
    # The CSRF check, which the test client skips by default, is what read the body twice.
    client = Client(enforce_csrf_checks=True)

    with console_output() as output:
        response = sign_in_post(client, charset)

    assert response.status_code == 400
    page = response.content.decode()
    assert "<h1>The portal could not read this request</h1>" in page
    assert "it reads UTF-8 only. Nothing was saved." in page
    line = output.lines_of("portal.requests")[-1]
    assert (line["method"], line["route"], line["status"]) == ("POST", "/accounts/login/", 400)


def test_a_form_labelled_with_another_name_of_utf_8_is_read_as_utf_8():
    client = Client(enforce_csrf_checks=True)
    client.get("/accounts/login/")
    token = client.cookies["csrftoken"].value
    body = f"csrfmiddlewaretoken={token}&username=café&password=wrong".encode()

    response = client.generic(
        "POST", "/accounts/login/", body, content_type=f"{FORM}; charset=UTF8"
    )

    assert response.status_code == 200
    assert 'value="café"' in response.content.decode()  # the sign-in form again, name read


def test_a_request_whose_error_page_fails_too_is_still_logged_as_a_500():
    def error_page_failing(request: HttpRequest) -> HttpResponse:
        raise RuntimeError("the error page failed")

    request = RequestFactory().post("/accounts/login/")
    with console_output() as output, pytest.raises(RuntimeError):
        RequestLogMiddleware(error_page_failing)(request)

    line = output.lines_of("portal.requests")[-1]
    assert (line["method"], line["status"]) == ("POST", 500)
