"""Every guess the partner API client makes where the spec is silent, in one place.

Owns the upstream's names and shapes that the spec leaves open: the API prefix, header and
parameter names, where error messages and request ids are found, the ranges of values, which
endpoints may be repeated, the endpoint paths, and the two request shapes we guess (the date of
birth and the submission body). Change a guess here and nowhere else. The portal's other guesses
(status texts, needs_help and RiskLevel values, session lifetime) live with the code that relies
on them; docs/partner-api.md lists them all.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from partner_api.contract import Response

# ---------------------------------------------------------------------------------------------
# Assumptions where the spec is silent (docs/partner-api.md). Everything the client guesses
# about the upstream lives in this block; change a guess here and nowhere else.
#
# - Base URL: the spec's base address is the bare host and every path starts with
#   /plapi/v1/partners; our settings carry the prefix. Both forms are accepted: the prefix is
#   appended when the configured URL does not already end with it (see
#   `client._normalise_base_url`).
API_PREFIX = "/plapi/v1/partners"
#
# - learnerid vs user_id: the `learnerid` header carries the `user_id` returned at creation.
LEARNER_ID_HEADER = "learnerid"
API_KEY_HEADER = "apikey"
#
# - dob format: an ISO date, YYYY-MM-DD (see `_dob_value` below).
# - level: sent as the query parameter `?level=LOA_PARTNER_LEVEL1/2/3`; omitted means the
#   upstream's default.
LEVEL_PARAM = "level"
#
# - Shape of a `responses` item, and the session type: see `_submission_body` below, the one
#   place that builds a submission. `assessment_session` arrives as a numeric-looking string
#   and is sent back as a JSON integer when it is all digits (the request schema says integer).
#
# - Error bodies: a JSON object whose `error`, `message` or `detail` holds a message;
#   otherwise the status alone (see `parsing._upstream_message`).
ERROR_MESSAGE_FIELDS = ("error", "message", "detail")
#
# - Request ids: the upstream's request id, if it sends one, is read from the first of these
#   response headers that is present (see `parsing._request_id`).
REQUEST_ID_HEADERS = ("X-Request-Id", "X-Correlation-Id", "Request-Id")
#
# - Ranges: the spec gives types, not ranges. Ids are positive 64-bit integers, counts,
#   orders and versions fit 32 bits, and decimals (Version, LOAScore) have at most 8 integer
#   digits and are kept to 4 decimal places; anything else is an unusable response (see
#   `parsing._identifier`, `parsing._integer` and `parsing._decimal`).
ID_RANGE = (1, 2**63 - 1)
IDENTIFIER_LIMIT = 200
SMALL_INT_RANGE = (-(2**31), 2**31 - 1)
DECIMAL_LIMIT = Decimal(10) ** 8
DECIMAL_PLACES = Decimal("0.0001")
#
# - Timestamps (Created, UpdatedDateTime): ISO 8601 with an offset; a trailing Z is accepted,
#   a timestamp without an offset is taken as UTC, an unparseable one is dropped (None) (see
#   `parsing._timestamp`).
#
# - Idempotency: the spec says nothing, so only what is safe is repeated. GETs are reads and
#   are retried on any "unavailable" failure. create-learner is retried only when the request
#   surely never left this host (a repeat could create a second learner or answer 409).
#   submit-assessment is never repeated here: the services reconcile (results, 409) first.
#   (`calls.Caller` applies these rules.)
RETRY_IF_UNAVAILABLE = "if unavailable"
RETRY_IF_NOT_SENT = "if not sent"
RETRY_NEVER = "never"
ENDPOINT_RETRIES = {
    "create-learner": RETRY_IF_NOT_SENT,
    "next-assessment": RETRY_IF_UNAVAILABLE,
    "view-assessment": RETRY_IF_UNAVAILABLE,
    "submit-assessment": RETRY_NEVER,
    "results": RETRY_IF_UNAVAILABLE,
}
NOT_RETRIED = {
    RETRY_IF_NOT_SENT: "not retried: the request may have reached the upstream",
    RETRY_NEVER: "not retried: a submission is never resent by the client",
}
#
# - Results asked for before they exist: the spec does not say. The upstream answers 404 (the
#   sandbox does too), and the portal asks on purpose while it waits for them or checks whether
#   a submission arrived, so that 404 is the expected answer, not a failure: it is logged,
#   counted and kept apart from failures (`calls._expected_refusal`).
EXPECTED_REFUSALS = {"results": frozenset({404})}
# ---------------------------------------------------------------------------------------------

# The spec's paths, below API_PREFIX.
ENDPOINT_PATHS = {
    "create-learner": "/users/create-learner",
    "next-assessment": "/assessments/next-assessment",
    "view-assessment": "/assessments/view-assessment/{assessment_id}",
    "submit-assessment": "/assessments/submit-assessment",
    "results": "/assessments/results/{assessment_id}",
}

_DIGITS = re.compile(r"[0-9]+")


def _dob_value(dob: date) -> str:
    """Render a date of birth as the upstream expects it (assumed ISO YYYY-MM-DD)."""
    if isinstance(dob, datetime) or not isinstance(dob, date):
        raise TypeError("dob must be a datetime.date")
    return dob.isoformat()


def _submission_body(session: str, responses: list[Response]) -> dict[str, Any]:
    """Build the submit-assessment body: one {question_id, answer_id} item per question."""
    # Spec gap: the item shape is not shown; we send the ids of Question and Answer under the
    # names `question_id` / `answer_id`. The session schema says integer while the content
    # carries it as a numeric-looking string: send an integer when it is all digits.
    if not isinstance(session, str | int) or isinstance(session, bool) or str(session) == "":
        raise ValueError("session must be the non-empty assessment_session of the content")
    if not responses:
        raise ValueError("responses must hold one Response per question")
    seen: set[str] = set()
    items = []
    for response in responses:
        if not isinstance(response, Response):
            raise TypeError("responses must be Response objects")
        if response.question_id in seen:
            raise ValueError("responses must hold one Response per question (duplicate)")
        seen.add(response.question_id)
        items.append({"question_id": response.question_id, "answer_id": response.answer_id})
    session_text = str(session)
    session_value: int | str = (
        int(session_text) if _DIGITS.fullmatch(session_text) else session_text
    )
    return {"responses": items, "session": session_value}
