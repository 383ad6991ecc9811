"""PostgreSQL may blink: pages say so with a 503 and Retry-After, never a 500.

The tests take the database away inside this process.
"""

from contextlib import contextmanager
from unittest import mock

from django.db import OperationalError, connection
from django.test import Client

from ops.database import outage
from tests.log_capture import console_output

REFUSED = 'connection failed: connection to server at "127.0.0.1", port 5432 failed: refused'


@contextmanager
def database_away():
    """Make every query of this thread fail as a stopped PostgreSQL makes it fail."""

    def refused(*args, **kwargs):
        raise OperationalError(REFUSED)

    with mock.patch.object(connection._connections["default"], "cursor", refused):
        yield


def assert_database_unavailable_page(response) -> str:
    """The plain-words 503 of a database that does not answer; return its text."""
    text = response.content.decode()
    assert response.status_code == 503, text[:2000]
    assert response["Retry-After"] == "10"
    assert "no-store" in response["Cache-Control"]
    assert "Something went wrong" not in text
    return text


def test_a_page_answers_503_with_retry_after_while_the_database_is_away(client, db):
    assert client.get("/accounts/login/").status_code == 200  # it reads the database

    with database_away(), console_output("plain") as output:
        response = client.get("/accounts/login/?next=/learners/")

    text = assert_database_unavailable_page(response)
    assert "The portal is briefly unavailable" in text
    assert "Anything you had saved is still saved" in text
    assert 'href="/accounts/login/?next=/learners/">Try again</a>' in text
    assert "GET /accounts/login/ 503 " in output.text  # the request log has it
    assert "The database does not answer (OperationalError: connection failed" in output.text
    # The same process answers as soon as the database does.
    assert client.get("/accounts/login/").status_code == 200
    assert outage.since is None


def test_a_signed_in_page_whose_session_cannot_be_read_answers_the_same_503(staff):
    client = Client(raise_request_exception=False)  # as a real server: handler500 answers
    client.force_login(staff)

    with database_away():
        response = client.get("/learners/")

    text = assert_database_unavailable_page(response)
    assert "The portal cannot reach its records just now" in text
    assert client.get("/learners/").status_code == 200
