"""Recording staff actions in the audit trail."""

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from audit.models import AuditEvent
from schools.context import working_school_id
from schools.models import first_school_id, several_schools

# Keys that must never reach the audit trail, whatever a caller passes.
FORBIDDEN_DETAIL_KEYS = frozenset({"password", "api_key", "apikey", "secret", "token"})


def audit_record(
    *,
    actor: AbstractBaseUser | AnonymousUser | None,
    address: str | None,
    action: str,
    learner=None,
    **detail: object,
) -> AuditEvent:
    """Append one event: who acted, when, what, to whom, and from which client address."""
    unsafe = FORBIDDEN_DETAIL_KEYS & {key.lower() for key in detail}
    if unsafe:
        raise ValueError(f"Audit detail must not hold {sorted(unsafe)}")
    signed_in = actor is not None and actor.is_authenticated
    # The learner's school, else the school the actor works in (None: every school's).
    school_id = learner.school_id if learner is not None else working_school_id()
    if school_id is None and not several_schools():
        school_id = first_school_id()
    return AuditEvent.objects.create(
        school_id=school_id,
        actor=actor if signed_in else None,
        actor_username=actor.get_username() if signed_in else "",
        action=action,
        learner=learner,
        learner_ref=str(learner.pk) if learner is not None else "",
        detail=detail,
        ip_address=address,
    )
