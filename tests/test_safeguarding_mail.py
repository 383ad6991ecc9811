"""An alert email sent through a real SMTP server: it arrives once and says almost nothing."""

import socket
import subprocess
import sys
from email import message_from_bytes

import environ
import pytest
from aiosmtpd.controller import Controller
from django.conf import settings as django_settings
from django.test import Client

from learners.models import Learner
from safeguarding.models import Alert, AlertEmail
from sandbox.server import DEMO_API_KEY
from tests.factories import DSL_ON_DUTY_EMAIL
from tests.journeys import LEARNER_PASSWORD, register_pupil
from tests.safeguarding_support import finish_with_labels


class Inbox:
    """An aiosmtpd handler that keeps every message it is given."""

    def __init__(self):
        self.messages = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append((envelope.rcpt_tos, message_from_bytes(envelope.content)))
        return "250 Message accepted for delivery"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def smtp_server(settings):
    """A real SMTP server on a free port, with the portal's mail pointed at it by EMAIL_URL."""
    inbox = Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    # Exactly what portal/settings.py does with EMAIL_URL.
    for name, value in environ.Env.email_url_config(f"smtp://127.0.0.1:{port}").items():
        setattr(settings, name, value)
    settings.DEFAULT_FROM_EMAIL = "alerts@school.example"
    yield inbox
    controller.stop()


@pytest.mark.django_db
def test_an_alert_reaches_a_real_smtp_server_once_holding_no_name_answer_or_secret(
    smtp_server, upstream, staff
):
    pupil = register_pupil(staff, "zara.zebedee")
    Learner.objects.filter(pk=pupil.pk).update(first_name="Zara", last_name="Quillfeather")
    attempt = finish_with_labels(upstream, pupil, needs_help="Yes - priority")
    answer_texts = {
        answer.copy
        for question in attempt.questions
        for answer in question.answers
        if len(answer.copy) > 6
    }

    (recipients, message) = _only(smtp_server.messages)

    assert recipients == [DSL_ON_DUTY_EMAIL]
    assert message["From"] == "alerts@school.example"
    text = f"{message['Subject']}\n{message.get_payload(decode=True).decode()}"
    alert = Alert.objects.get(attempt=attempt)
    assert f"/safeguarding/alerts/{alert.pk}/" in text
    for private in [
        "Zara",
        "Quillfeather",
        "zara.zebedee",
        pupil.upstream_user_id,
        "Yes - priority",
        LEARNER_PASSWORD,
        DEMO_API_KEY,
        django_settings.SECRET_KEY,
        *[area.name for area in attempt.result.focus_areas.all()],
        *[question.text for question in attempt.questions],
        *answer_texts,
    ]:
        assert private not in text, private
    assert AlertEmail.objects.get().state == AlertEmail.State.SENT


@pytest.mark.django_db
def test_an_urgent_request_is_sent_as_needing_review_now_not_as_overdue(smtp_server, learner):
    pupil = Client()
    pupil.force_login(learner.user)

    pupil.post("/me/talk/", {"unsafe": "on"})

    subjects = [message["Subject"] for _, message in smtp_server.messages]
    bodies = [message.get_payload(decode=True).decode() for _, message in smtp_server.messages]
    assert subjects == ["Safeguarding alert needs review", "Safeguarding alert: please review now"]
    assert "A safeguarding alert needs review now. Sign in to read it." in bodies[1]
    assert "/safeguarding/alerts/" in bodies[1]
    # Raised this minute: nothing may read as a routine alert past its deadline.
    assert "not been acknowledged" not in bodies[1] and "raised at" not in bodies[1]
    # A pupil's request is not "a result".
    assert "result" not in f"{subjects[0]}\n{bodies[0]}".lower()


def _only(messages):
    assert len(messages) == 1, messages
    return messages[0]


def test_email_url_configures_smtp_and_the_default_prints_to_the_console():
    def mail_settings(env: dict) -> str:
        code = (
            "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'portal.settings';"
            "django.setup(); from django.conf import settings as s;"
            "print(s.EMAIL_BACKEND, s.EMAIL_HOST, s.EMAIL_PORT, s.DEFAULT_FROM_EMAIL)"
        )
        clean = {k: v for k, v in __import__("os").environ.items() if not k.startswith("EMAIL")}
        done = subprocess.run(
            [sys.executable, "-c", code],
            env={**clean, **env},
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        return done.stdout.strip()

    assert mail_settings({}).startswith("django.core.mail.backends.console.EmailBackend")
    configured = mail_settings(
        {"EMAIL_URL": "smtp://127.0.0.1:1025", "DEFAULT_FROM_EMAIL": "dsl-alerts@school.example"}
    )
    assert configured == (
        "django.core.mail.backends.smtp.EmailBackend 127.0.0.1 1025 dsl-alerts@school.example"
    )
