"""Fault injection for the sandbox: rules that make chosen requests slow, fail, hang or lie.

A rule names an endpoint (or `*` for all five), a fault kind and options. For each request the
sandbox asks `FaultSet.take(endpoint)` for the fault to apply; the first active rule that matches
wins. Rules live in memory only (never in the state file). The compact text form used on the
command line, by `manage.py sandbox_faults` and in listings is described in FAULT_SYNTAX_HELP.

Which requests a rule hits is deterministic: `after` and `times` count the requests to the
rule's endpoint, and `rate` draws from a random.Random of the rule's own, seeded from the set's
seed and the rule's endpoint and kind, so the same seed and the same requests give the same
faults, whatever other endpoints receive meanwhile.
"""

from __future__ import annotations

import random
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

ENDPOINTS = (
    "create-learner",
    "next-assessment",
    "view-assessment",
    "submit-assessment",
    "results",
)
ANY_ENDPOINT = "*"
ENDPOINT_ALIASES = {
    "create": "create-learner",
    "next": "next-assessment",
    "view": "view-assessment",
    "submit": "submit-assessment",
    "all": ANY_ENDPOINT,
}

# Kinds that answer an error status of their own before doing any work.
STATUS_KINDS = {"500": 500, "502": 502, "503": 503, "504": 504, "429": 429}
KINDS = (
    "latency",
    "500",
    "502",
    "503",
    "504",
    "429",
    "error",
    "hang",
    "drop",
    "non_json",
    "missing_field",
    "processed_500",
    "expired_session",
    "relabel",
)

# The field a `missing_field` fault leaves out of each endpoint's success body by default.
# next-assessment is special: without assessment_id it would read as "none available", which is
# a valid answer, so by default it loses `status` and gets an assessment_id of the wrong type.
MISSING_FIELDS = {
    "create-learner": "user_id",
    "next-assessment": "status",
    "view-assessment": "assessment_session",
    "submit-assessment": "status",
    "results": "LOAScore",
}
JUNK_ASSESSMENT_ID = "junk"

HANG_SECONDS = 15.0
LATENCY_MS = 1000
RETRY_AFTER = 1

FAULT_SYNTAX_HELP = """\
Fault rules: ENDPOINT=KIND[:OPTION=VALUE[,OPTION=VALUE...]]

  ENDPOINT  create-learner (create), next-assessment (next), view-assessment (view),
            submit-assessment (submit), results, or * (all) for every endpoint
  KIND      latency          wait ms=N milliseconds (default 1000), then answer normally
            500, 502, 504    answer that status at once (optional retry_after=N)
            503, 429         answer that status with Retry-After: N (retry_after=N, default 1;
                             retry_after=none sends no header)
            error            answer status=NNN (400-599; optional retry_after=N)
            hang             read the request, then wait seconds=S (default 15) and close the
                             connection without answering
            drop             read the request and close the connection without any response
            non_json         answer 200 with an HTML page; processed=true does the work first
            missing_field    do the work, then answer success with the JSON body less one
                             required field (field=NAME to choose it; next-assessment by
                             default loses status and gets an assessment_id of the wrong type)
            processed_500    do the work (create the learner, record the submission), then
                             answer status=NNN (default 500)
            expired_session  submit-assessment only: forget the learner's sessions and answer
                             400 {"error": "Unknown or expired session"}
            relabel          results only: answer as usual, but with needs_help=TEXT for the
                             areas that need help and/or risk_level=TEXT as the RiskLevel
                             (labels the spec does not list, e.g. "Yes - priority")
  Options for every kind:
            times=N          apply to the next N matching requests, then remove the rule
            rate=P           apply to each matching request with probability P (0..1), drawn
                             from a generator seeded by --seed; with times=N, at most N times
            after=K          let the first K matching requests through untouched
  Without times or rate a rule applies to every matching request until cleared.
  The first rule that matches a request wins.

  Examples: view-assessment=503:times=2,retry_after=1   results=latency:ms=300
            submit=processed_500:times=1   next=drop:rate=0.2   *=hang:seconds=20,after=3

  At run time: GET (list), POST (add) and DELETE (clear) /_sandbox/faults on the running
  sandbox, with the apikey header; or `manage.py sandbox_faults list|add|remove|clear|seed`.
"""


class FaultError(ValueError):
    """A fault rule or spec that cannot be used; the message says why."""


def _integer(name: str, value: Any, *, minimum: int, maximum: int | None = None) -> int:
    """Return an integer option (given as a number or a string of digits), or raise."""
    if isinstance(value, bool):
        raise FaultError(f"{name} must be an integer, got {value!r}")
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise FaultError(f"{name} must be an integer, got {value!r}") from None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int):
        raise FaultError(f"{name} must be an integer, got {value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        bounds = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
        raise FaultError(f"{name} must be {bounds}, got {value}")
    return value


def _number(name: str, value: Any, *, minimum: float, maximum: float | None = None) -> float:
    """Return a number option (given as a number or a string), or raise."""
    if isinstance(value, bool):
        raise FaultError(f"{name} must be a number, got {value!r}")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise FaultError(f"{name} must be a number, got {value!r}") from None
    if not isinstance(value, int | float) or value != value:  # NaN is not a number here
        raise FaultError(f"{name} must be a number, got {value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        bounds = (
            f"between {minimum:g} and {maximum:g}" if maximum is not None else f">= {minimum:g}"
        )
        raise FaultError(f"{name} must be {bounds}, got {value:g}")
    return float(value)


def _times(value: Any) -> int:
    return _integer("times", value, minimum=1)


def _after(value: Any) -> int:
    return _integer("after", value, minimum=0)


def _rate(value: Any) -> float:
    return _number("rate", value, minimum=0.0, maximum=1.0)


def _ms(value: Any) -> int:
    return _integer("ms", value, minimum=0, maximum=600_000)


def _seconds(value: Any) -> float:
    return _number("seconds", value, minimum=0.0, maximum=3600.0)


def _status(value: Any) -> int:
    return _integer("status", value, minimum=400, maximum=599)


def _retry_after(value: Any) -> int | None:
    if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
        return None
    return _integer("retry_after", value, minimum=0, maximum=86_400)


def _processed(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"1", "true", "yes", "on"}:
        return True
    if isinstance(value, str) and value.strip().lower() in {"0", "false", "no", "off"}:
        return False
    raise FaultError(f"processed must be true or false, got {value!r}")


def _label(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 100:
        raise FaultError(f"a label must be 1 to 100 characters, got {value!r}")
    return value.strip()


def _field_name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise FaultError(f"field must be a field name, got {value!r}")
    return value.strip()


_REQUIRED = object()  # marks an option a kind cannot do without

# kind -> option -> (converter, default); the options every kind takes are in _RULE_OPTIONS.
_KIND_OPTIONS: dict[str, dict[str, tuple[Callable[[Any], Any], Any]]] = {
    "latency": {"ms": (_ms, LATENCY_MS)},
    "500": {"retry_after": (_retry_after, None)},
    "502": {"retry_after": (_retry_after, None)},
    "503": {"retry_after": (_retry_after, RETRY_AFTER)},
    "504": {"retry_after": (_retry_after, None)},
    "429": {"retry_after": (_retry_after, RETRY_AFTER)},
    "error": {"status": (_status, _REQUIRED), "retry_after": (_retry_after, None)},
    "hang": {"seconds": (_seconds, HANG_SECONDS)},
    "drop": {},
    "non_json": {"processed": (_processed, False)},
    "missing_field": {"field": (_field_name, None)},
    "processed_500": {"status": (_status, 500)},
    "expired_session": {},
    "relabel": {"needs_help": (_label, None), "risk_level": (_label, None)},
}
_RULE_OPTIONS: dict[str, Callable[[Any], Any]] = {"times": _times, "rate": _rate, "after": _after}


def normalize_endpoint(name: Any) -> str:
    """Return the canonical endpoint name for a name or alias, or raise FaultError."""
    if not isinstance(name, str):
        raise FaultError(f"endpoint must be a string, got {name!r}")
    cleaned = name.strip().lower()
    cleaned = ENDPOINT_ALIASES.get(cleaned, cleaned)
    if cleaned not in ENDPOINTS and cleaned != ANY_ENDPOINT:
        choices = ", ".join((*ENDPOINTS, ANY_ENDPOINT))
        raise FaultError(f"Unknown endpoint {name!r} (expected one of: {choices})")
    return cleaned


def normalize_kind(name: Any) -> str:
    """Return the canonical kind for a name (non-json and non_json alike), or raise."""
    if not isinstance(name, str | int) or isinstance(name, bool):
        raise FaultError(f"kind must be a string, got {name!r}")
    cleaned = str(name).strip().lower().replace("-", "_")
    if cleaned not in KINDS:
        raise FaultError(f"Unknown fault kind {name!r} (expected one of: {', '.join(KINDS)})")
    return cleaned


@dataclass
class FaultRule:
    """One active rule: where it applies, what it does and how often, and what it has done."""

    id: int
    endpoint: str
    kind: str
    options: dict[str, Any]
    times: int | None = None
    rate: float | None = None
    after: int = 0
    seen: int = 0  # requests to the endpoint since the rule was added
    applied: int = 0  # faults it has caused
    rng: random.Random = field(default_factory=random.Random, repr=False)

    def matches(self, endpoint: str) -> bool:
        """Return whether the rule concerns requests to an endpoint."""
        return self.endpoint in (endpoint, ANY_ENDPOINT)

    @property
    def remaining(self) -> int | None:
        """Return how many more faults it may cause (None: no limit)."""
        return None if self.times is None else self.times - self.applied

    def option(self, name: str) -> Any:
        """Return one of the kind's options."""
        return self.options[name]

    def spec(self) -> str:
        """Return the rule in the compact text form (which parse_fault_spec reads back)."""
        parts = [f"times={self.times}"] if self.times is not None else []
        if self.rate is not None:
            parts.append(f"rate={self.rate:g}")
        if self.after:
            parts.append(f"after={self.after}")
        for name, value in self.options.items():
            if value is None and name != "retry_after":
                continue
            if name == "retry_after" and value is None:
                if _KIND_OPTIONS[self.kind][name][1] is None:
                    continue  # no header is this kind's default; say nothing
                text = "none"
            elif isinstance(value, bool):
                text = "true" if value else "false"
            elif isinstance(value, float):
                text = f"{value:g}"
            else:
                text = str(value)
            parts.append(f"{name}={text}")
        options = ":" + ",".join(parts) if parts else ""
        return f"{self.endpoint}={self.kind}{options}"

    def as_json(self) -> dict[str, Any]:
        """Return the rule as JSON-ready data, as listed by the control API."""
        return {
            "id": self.id,
            "endpoint": self.endpoint,
            "kind": self.kind,
            "times": self.times,
            "rate": self.rate,
            "after": self.after,
            **self.options,
            "seen": self.seen,
            "applied": self.applied,
            "remaining": self.remaining,
            "spec": self.spec(),
        }


def build_rule(rule_id: int, endpoint: Any, kind: Any, options: dict[str, Any]) -> FaultRule:
    """Check and convert a rule's parts (numbers or strings alike), or raise FaultError."""
    endpoint = normalize_endpoint(endpoint)
    kind = normalize_kind(kind)
    if kind == "relabel" and endpoint != "results":
        raise FaultError("relabel applies to the results endpoint only")
    if kind == "expired_session" and endpoint != "submit-assessment":
        raise FaultError("expired_session applies to submit-assessment only")
    allowed = _KIND_OPTIONS[kind]
    unknown = sorted(set(options) - set(allowed) - set(_RULE_OPTIONS))
    if unknown:
        names = ", ".join(sorted((*_RULE_OPTIONS, *allowed)))
        raise FaultError(f"Option {unknown[0]!r} does not apply to {kind} (allowed: {names})")
    converted: dict[str, Any] = {}
    for name, (convert, default) in allowed.items():
        if name in options:
            converted[name] = convert(options[name])
        elif default is _REQUIRED:
            raise FaultError(f"{kind} needs the option {name}=...")
        else:
            converted[name] = default
    rule = FaultRule(rule_id, endpoint, kind, converted)
    for name, convert in _RULE_OPTIONS.items():
        if options.get(name) is not None:
            setattr(rule, name, convert(options[name]))
    return rule


def parse_fault_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """Split `ENDPOINT=KIND[:OPT=VALUE,...]` into a checked endpoint, kind and options.

    The options come back as strings; they are checked too, so a bad spec fails here with a
    message that says what is wrong.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise FaultError("A fault spec is ENDPOINT=KIND[:OPTION=VALUE,...]; got an empty one")
    target, separator, rest = spec.strip().partition("=")
    if not separator or not rest:
        raise FaultError(
            f"Bad fault spec {spec!r}: expected ENDPOINT=KIND[:OPTION=VALUE,...], "
            "e.g. view-assessment=503:times=2"
        )
    kind, _, option_text = rest.partition(":")
    options: dict[str, str] = {}
    for item in option_text.split(",") if option_text.strip() else ():
        name, equals, value = item.partition("=")
        name = name.strip()
        if not equals or not name or not value.strip():
            raise FaultError(f"Bad option {item.strip()!r} in {spec!r}: expected NAME=VALUE")
        if name in options:
            raise FaultError(f"Option {name!r} is given twice in {spec!r}")
        options[name] = value.strip()
    try:
        rule = build_rule(0, target, kind, options)
    except FaultError as error:
        raise FaultError(f"Bad fault spec {spec!r}: {error}") from None
    return rule.endpoint, rule.kind, options


class FaultSet:
    """The active fault rules of one sandbox, safe to use from many request threads."""

    def __init__(self, seed: int | None = None) -> None:
        self._lock = threading.Lock()
        self._rules: list[FaultRule] = []
        self._next_id = 1
        self._applied: list[tuple[str, str]] = []
        # Without a seed, pick one and show it in listings, so a run can still be replayed.
        self.seed = seed if seed is not None else secrets.randbelow(10**6)

    def _rng_for(self, rule: FaultRule) -> random.Random:
        # A string seed is hashed the same way in every process (unlike hash()).
        return random.Random(f"{self.seed}/{rule.endpoint}/{rule.kind}")

    def add(self, endpoint: str, kind: str, **options: Any) -> dict[str, Any]:
        """Add a rule after the existing ones and return it as listed; raise FaultError."""
        with self._lock:
            rule = build_rule(self._next_id, endpoint, kind, options)
            rule.rng = self._rng_for(rule)
            self._next_id += 1
            self._rules.append(rule)
            return rule.as_json()

    def add_spec(self, spec: str) -> dict[str, Any]:
        """Add a rule written in the compact text form."""
        endpoint, kind, options = parse_fault_spec(spec)
        return self.add(endpoint, kind, **options)

    def remove(self, rule_id: int) -> bool:
        """Remove one rule by id; return whether there was one."""
        with self._lock:
            kept = [rule for rule in self._rules if rule.id != rule_id]
            removed = len(kept) != len(self._rules)
            self._rules = kept
            return removed

    def clear(self) -> int:
        """Remove every rule and return how many there were."""
        with self._lock:
            count = len(self._rules)
            self._rules = []
            return count

    def reseed(self, seed: int) -> None:
        """Use a new seed, for the active rules (from their start) and the ones added later."""
        with self._lock:
            self.seed = seed
            for rule in self._rules:
                rule.rng = self._rng_for(rule)

    def rules(self) -> list[dict[str, Any]]:
        """Return the active rules, in the order they are tried, as JSON-ready data."""
        with self._lock:
            return [rule.as_json() for rule in self._rules]

    def applied(self) -> list[tuple[str, str]]:
        """Return the (endpoint, kind) of every fault applied so far, in order."""
        with self._lock:
            return list(self._applied)

    def take(self, endpoint: str) -> FaultRule | None:
        """Return the fault to apply to a request to an endpoint, or None, counting it."""
        with self._lock:
            candidates = [rule for rule in self._rules if rule.matches(endpoint)]
            chosen = None
            for rule in candidates:
                rule.seen += 1
                if rule.seen <= rule.after:
                    continue
                # Every eligible rule with a rate draws, winner or not, so that each rule's
                # sequence depends only on the requests to its endpoint and the seed.
                hit = rule.rate is None or rule.rng.random() < rule.rate
                if hit and chosen is None:
                    chosen = rule
            if chosen is None:
                return None
            chosen.applied += 1
            if chosen.remaining == 0:
                self._rules.remove(chosen)
            self._applied.append((endpoint, chosen.kind))
            return chosen
