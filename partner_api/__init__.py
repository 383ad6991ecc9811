"""Client for the Learner Assessment Partner API: the only package of the portal that talks HTTP.

Import it as `from portal import partner_api` (or names from it): checks and scripts rely on
that path, so every name below stays importable from there wherever it lives. The client's
modules, from the bottom up:

- contract: the dataclasses returned to callers (and Response, taken for a submission), and
  PartnerApiError with its kinds;
- assumptions: every guess about the upstream where the spec is silent (docs/partner-api.md);
- parsing: response bodies validated into the dataclasses; error messages, Retry-After and
  request ids read from replies, secrets redacted;
- resilience: the retry policy, the circuit breaker, the store through which breakers of several
  processes share an opening, and UpstreamStatus;
- transport: HTTP (the only module that imports requests and urllib3);
- calls: what happens to every call (breaker, retries, logs), CallRecord and the listeners;
- client: PartnerApiClient and its five endpoints; get_client() from Django settings, and
  upstream_status().

Beside them, the app's Django side: levels (the spec's Level codes), models (UpstreamFailure,
UpstreamHealth), upstream (what people are told of a failure, the record of failed calls, the
circuit shared through the cache) and apps (which connects them to the client).
"""

from partner_api.assumptions import (
    API_KEY_HEADER,
    API_PREFIX,
    DECIMAL_LIMIT,
    DECIMAL_PLACES,
    ENDPOINT_PATHS,
    ENDPOINT_RETRIES,
    ERROR_MESSAGE_FIELDS,
    ID_RANGE,
    IDENTIFIER_LIMIT,
    LEARNER_ID_HEADER,
    LEVEL_PARAM,
    NOT_RETRIED,
    REQUEST_ID_HEADERS,
    RETRY_IF_NOT_SENT,
    RETRY_IF_UNAVAILABLE,
    RETRY_NEVER,
    SMALL_INT_RANGE,
)
from partner_api.calls import (
    CallRecord,
    add_call_listener,
    add_circuit_listener,
    notify_call_listeners,
    notify_circuit_listeners,
    remove_call_listener,
    remove_circuit_listener,
)
from partner_api.client import (
    CLIENT_SETTINGS,
    DEFAULT_TIMEOUT,
    PartnerApiClient,
    get_client,
    upstream_status,
)
from partner_api.contract import (
    Answer,
    AssessmentContent,
    AssessmentInfo,
    AssessmentResults,
    CreatedLearner,
    FocusArea,
    NextAssessment,
    PartnerApiBadResponse,
    PartnerApiCircuitOpen,
    PartnerApiError,
    PartnerApiRejected,
    PartnerApiServerError,
    PartnerApiUnavailable,
    Question,
    Response,
    SubmitReceipt,
)
from partner_api.parsing import REDACTED, UPSTREAM_MESSAGE_LIMIT
from partner_api.resilience import (
    DEFAULT_BACKOFF,
    DEFAULT_BACKOFF_CAP,
    DEFAULT_BREAKER_COOLDOWN,
    DEFAULT_BREAKER_THRESHOLD,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_RETRY_AFTER_CAP,
    DEFAULT_RETRY_BUDGET,
    MIN_ATTEMPT_SECONDS,
    BreakerSnapshot,
    CircuitBreaker,
    CircuitStore,
    Permit,
    RetryPlan,
    RetryPolicy,
    UpstreamStatus,
    Verdict,
    breaker_for,
    check_breaker_settings,
    circuit_store,
    existing_breaker,
    reset_circuit_breakers,
    set_circuit_store,
    status_of,
)
from partner_api.transport import (
    SUBMIT_TEXT_BODY_LIMIT,
    UNAVAILABLE_STATUSES,
    USER_AGENT,
)

__all__ = [
    # The client contract, and the retries, breaker and listeners around it.
    "Answer",
    "AssessmentContent",
    "AssessmentInfo",
    "AssessmentResults",
    "BreakerSnapshot",
    "CallRecord",
    "CircuitBreaker",
    "CircuitStore",
    "CreatedLearner",
    "FocusArea",
    "NextAssessment",
    "PartnerApiBadResponse",
    "PartnerApiCircuitOpen",
    "PartnerApiClient",
    "PartnerApiError",
    "PartnerApiRejected",
    "PartnerApiServerError",
    "PartnerApiUnavailable",
    "Permit",
    "Question",
    "Response",
    "RetryPlan",
    "RetryPolicy",
    "SubmitReceipt",
    "UpstreamStatus",
    "Verdict",
    "add_call_listener",
    "add_circuit_listener",
    "breaker_for",
    "check_breaker_settings",
    "circuit_store",
    "existing_breaker",
    "get_client",
    "notify_call_listeners",
    "notify_circuit_listeners",
    "remove_call_listener",
    "remove_circuit_listener",
    "reset_circuit_breakers",
    "set_circuit_store",
    "status_of",
    "upstream_status",
    # The assumptions, defaults and limits, readable here as they were before the package.
    "API_KEY_HEADER",
    "API_PREFIX",
    "CLIENT_SETTINGS",
    "DECIMAL_LIMIT",
    "DECIMAL_PLACES",
    "DEFAULT_BACKOFF",
    "DEFAULT_BACKOFF_CAP",
    "DEFAULT_BREAKER_COOLDOWN",
    "DEFAULT_BREAKER_THRESHOLD",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_RETRY_AFTER_CAP",
    "DEFAULT_RETRY_BUDGET",
    "DEFAULT_TIMEOUT",
    "ENDPOINT_PATHS",
    "ENDPOINT_RETRIES",
    "ERROR_MESSAGE_FIELDS",
    "IDENTIFIER_LIMIT",
    "ID_RANGE",
    "LEARNER_ID_HEADER",
    "LEVEL_PARAM",
    "MIN_ATTEMPT_SECONDS",
    "NOT_RETRIED",
    "REDACTED",
    "REQUEST_ID_HEADERS",
    "RETRY_IF_NOT_SENT",
    "RETRY_IF_UNAVAILABLE",
    "RETRY_NEVER",
    "SMALL_INT_RANGE",
    "SUBMIT_TEXT_BODY_LIMIT",
    "UNAVAILABLE_STATUSES",
    "UPSTREAM_MESSAGE_LIMIT",
    "USER_AGENT",
]
