"""Receivers of other apps' signals."""

from django.contrib.auth.models import AbstractBaseUser

from assessments.models import AssessmentResult
from safeguarding.services import (
    alert_emails_retry_failed,
    alert_raise_for_result,
    alert_raise_test,
)


def raise_alert_on_result_stored(sender, *, result: AssessmentResult, **kwargs) -> None:
    """Raise the alert of a freshly stored result with a priority or unrecognised value."""
    # Inside the storing transaction: if this fails, the result is not stored either, and
    # delivery tries again, so no result that needs a lead is left without its alert.
    alert_raise_for_result(result=result)


def send_test_alert_on_role_granted(sender, *, user: AbstractBaseUser, **kwargs) -> None:
    """Send a new safeguarding lead a test alert, so a wrong address shows before it matters."""
    alert_raise_test(lead=user)
    # Emails that found no lead (or a wrong address) before: the new lead is sent them now.
    alert_emails_retry_failed()
