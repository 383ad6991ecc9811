"""Client for the Learner Assessment Partner API: the only package of the portal that talks HTTP.

The package exports what the apps use, and the client contract of ../shared/DESIGN.md (section
3): the client, get_client(), the dataclasses and the errors. Anything else is imported from its
module (`from partner_api.resilience import reset_circuit_breakers`). `portal.partner_api`, the
old address that checks and scripts import, still offers every name it offered before. The
client's modules, from the bottom up:

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

from partner_api.calls import CallRecord, add_call_listener
from partner_api.client import PartnerApiClient, get_client
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

__all__ = [
    # The client contract: the client, the dataclasses it returns and takes, its errors.
    "Answer",
    "AssessmentContent",
    "AssessmentInfo",
    "AssessmentResults",
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
    "Question",
    "Response",
    "SubmitReceipt",
    "get_client",
    # What the operations metrics listen to (ops.apps, ops.metrics).
    "CallRecord",
    "add_call_listener",
]
