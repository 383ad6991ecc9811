"""Bad input gets a clear answer: a form in a charset the portal cannot read, names that would
show reversed or not at all, and CSV downloads that say their charset."""

import pytest
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory

from accounts.models import StaffRole
from classes.models import SchoolGroup
from imports.models import ImportRow
from learners.models import Learner
from ops.request_log import RequestLogMiddleware
from tests.factories import GOOD_PASSWORD, HEADER, make_staff, signed_in, upload_file
from tests.log_capture import console_output

pytestmark = pytest.mark.django_db

FORM = "application/x-www-form-urlencoded"
RIGHT_TO_LEFT_OVERRIDE = "\u202e"
BIDI_MESSAGE = "This name holds a hidden character that changes the direction of the text"
INVISIBLE_MESSAGE = "This name is made only of invisible characters. Type it in letters."


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


@pytest.mark.parametrize("parameter", ["charset*=utf-8''%00", "charset*=bogus''%41"])
def test_a_content_type_django_cannot_parse_is_the_same_clear_400_not_a_bare_500(parameter):
    """Django raises on such a header while making the request: the server's own WSGI app."""
    import io
    from wsgiref.util import setup_testing_defaults

    from portal.wsgi import application

    body = b"username=someone&password=wrong"
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/accounts/login/",
        "CONTENT_TYPE": f"{FORM}; {parameter}",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
    }
    setup_testing_defaults(environ)
    environ["SERVER_NAME"] = environ["HTTP_HOST"] = "testserver"
    started = []

    with console_output() as output:
        page = b"".join(application(environ, lambda status, headers: started.append(status)))

    assert started == ["400 Bad Request"]
    assert b"<h1>The portal could not read this request</h1>" in page
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


# Names -----------------------------------------------------------------------------------------

BAD_NAMES = [
    (f"{RIGHT_TO_LEFT_OVERRIDE}eeL", BIDI_MESSAGE),
    ("Lee\u2066x\u2069", BIDI_MESSAGE),
    ("Lee\u200f", BIDI_MESSAGE),
    ("\u061cLee", BIDI_MESSAGE),
    ("\u200b", INVISIBLE_MESSAGE),
    ("\u200c \u200d\u2060\ufeff", INVISIBLE_MESSAGE),
]


@pytest.mark.parametrize(("name", "message"), BAD_NAMES)
def test_registering_a_learner_refuses_a_reversing_or_invisible_name(staff_client, name, message):
    response = staff_client.post(
        "/learners/new/",
        {"username": "new.pupil", "password": GOOD_PASSWORD, "dob_day": "2",
         "dob_month": "1", "dob_year": "2012", "first_name": "Ann", "last_name": name},
    )  # fmt: skip

    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Learner.objects.filter(username="new.pupil").exists()


def test_a_name_with_a_joiner_inside_it_is_a_name(staff_client, learner):
    # Persian, the Indic scripts and emoji need the zero-width joiners between letters.
    response = staff_client.post(
        f"/learners/{learner.pk}/edit/",
        {"first_name": "محمد\u200cرضا", "last_name": "Pupil", "dob_day": "17",
         "dob_month": "5", "dob_year": "2010", "level": learner.level},
    )  # fmt: skip

    assert response.status_code == 302
    learner.refresh_from_db()
    assert learner.first_name == "محمد\u200cرضا"


def test_correcting_a_learners_name_refuses_a_right_to_left_override(staff_client, learner):
    response = staff_client.post(
        f"/learners/{learner.pk}/edit/",
        {"first_name": f"Lee{RIGHT_TO_LEFT_OVERRIDE}", "last_name": "Pupil", "dob_day": "17",
         "dob_month": "5", "dob_year": "2010", "level": learner.level},
    )  # fmt: skip

    assert response.status_code == 200
    assert BIDI_MESSAGE in response.content.decode()
    learner.refresh_from_db()
    assert learner.first_name == "Lee"


@pytest.mark.parametrize(("name", "message"), BAD_NAMES[::4])
def test_a_staff_account_refuses_a_reversing_or_invisible_name(name, message):
    admin = make_staff("ada.admin", role=StaffRole.ADMIN)

    response = signed_in(admin).post(
        "/staff/new/",
        {"username": "tom.teacher", "email": "tom@school.example", "role": "teacher",
         "first_name": name, "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD},
    )  # fmt: skip

    assert response.status_code == 200
    assert message in response.content.decode()
    assert not User.objects.filter(username="tom.teacher").exists()


@pytest.mark.parametrize(("name", "message"), BAD_NAMES[::4])
def test_a_group_refuses_a_reversing_or_invisible_name(name, message):
    admin = make_staff("ada.admin", role=StaffRole.ADMIN)

    response = signed_in(admin).post("/classes/new/", {"name": name, "level": "LOA_PARTNER_LEVEL2"})

    assert response.status_code == 200
    assert message in response.content.decode()
    assert not SchoolGroup.objects.exists()


def test_a_bulk_registration_row_with_such_a_name_is_a_problem_saying_why(staff_client):
    rows = [
        f"fine.one,{GOOD_PASSWORD},2010-01-02,,Ada,Lovelace,",
        f"bidi.one,{GOOD_PASSWORD},2010-01-02,,Ada{RIGHT_TO_LEFT_OVERRIDE},Lovelace,",
        f"blank.one,{GOOD_PASSWORD},2010-01-02,,Ada,\u200b\u200b,",
    ]

    response = staff_client.post(
        "/learners/import/", {"file": upload_file(HEADER + "\n" + "\n".join(rows) + "\n")}
    )

    assert response.status_code == 302
    problems = {row.username: row.problems for row in ImportRow.objects.all()}
    assert problems["fine.one"] == []
    assert problems["bidi.one"] == [f"first_name: {BIDI_MESSAGE}, so it could show reversed. "
                                    "Type the name again without it."]  # fmt: skip
    assert problems["blank.one"] == [f"last_name: {INVISIBLE_MESSAGE}"]


# CSV downloads ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/learners/learners.csv", "/learners/import/template.csv", "/learners/results.csv"]
)
def test_every_csv_download_says_it_is_utf_8(staff_client, path):
    response = staff_client.get(path)

    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert b"".join(response.streaming_content).startswith("\ufeff".encode())
