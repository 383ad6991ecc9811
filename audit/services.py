"""Recording staff actions in the audit trail."""

from django.conf import settings
from django.http import HttpRequest

from audit.models import AuditEvent

# Keys that must never reach the audit trail, whatever a caller passes.
FORBIDDEN_DETAIL_KEYS = frozenset({"password", "api_key", "apikey", "secret", "token"})


def audit_record(
    *,
    request: HttpRequest,
    action: str,
    learner=None,
    **detail: object,
) -> AuditEvent:
    """Append one event: who (the signed-in user), when, what, to whom, and from which IP."""
    unsafe = FORBIDDEN_DETAIL_KEYS & {key.lower() for key in detail}
    if unsafe:
        raise ValueError(f"Audit detail must not hold {sorted(unsafe)}")
    user = request.user
    return AuditEvent.objects.create(
        actor=user if user.is_authenticated else None,
        actor_username=user.get_username() if user.is_authenticated else "",
        action=action,
        learner=learner,
        learner_ref=str(learner.pk) if learner is not None else "",
        detail=detail,
        ip_address=client_ip(request),
    )


def client_ip(request: HttpRequest) -> str | None:
    """Return the client's IP: REMOTE_ADDR, or the proxy's header when one is trusted."""
    if settings.AUDIT_TRUST_X_FORWARDED_FOR:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        # The nearest proxy appends the address it saw: trust only that last entry.
        last = forwarded.split(",")[-1].strip()
        if last:
            return last
    return request.META.get("REMOTE_ADDR") or None
