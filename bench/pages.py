"""The learner's pages under load: gunicorn (2 workers) against a bare view, side by side.

A learner with an in-progress attempt and a completed one is set up locally (no upstream),
gunicorn serves the portal with bench.settings, and a second process (wrk, or the Python
load generator in bench/loadgen.py) requests each URL in turn, several rounds interleaved,
with the learner's session cookie on every request.
"""

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from decimal import Decimal
from http.client import HTTPConnection
from importlib import import_module
from pathlib import Path
from statistics import median

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.db import transaction
from django.utils import timezone

from bench.support import free_port, wait_for_port
from partner_api import Answer, Question

ROOT = Path(__file__).resolve().parent.parent
USERNAME = "bench.pages.learner"
PRIMARY_USERNAME = "bench.pages.pupil"
IN_PROGRESS_ID = 990_000_001
COMPLETED_ID = 990_000_002
TARGET_RATIO = 5.0


@dataclass
class PageTargets:
    """The URLs under load and the cookies that sign the learners in."""

    cookie: str
    question: str
    results: str
    # A primary pupil's one-question page (their school's default layout), their own cookie.
    primary_cookie: str
    primary_question: str
    bare: str = "/bench/bare/"


def bank_questions(level: str | None = None) -> list[Question]:
    """Return the sandbox bank's questions at a level as the client would read them, in order."""
    from sandbox import bank

    return [
        Question(
            id=question.id,
            text=question.text,
            group=question.group,
            display_order=question.display_order,
            created=None,
            updated=None,
            answers=[
                Answer(
                    id=answer.id,
                    question_id=question.id,
                    display_order=position,
                    copy=answer.text,
                    icon=answer.icon,
                )
                for position, answer in enumerate(question.answers, 1)
            ],
        )
        for question in bank.questions_for_level(level or bank.DEFAULT_LEVEL)
    ]


@transaction.atomic
def setup_learner() -> PageTargets:
    """Create (or reset) the bench learners: a secondary one with an attempt half answered
    and one with results, and a primary pupil with an attempt half answered."""
    from learners.models import Level

    cookie, question, results = _setup_one(USERNAME, Level.SECONDARY, with_results=True)
    primary_cookie, primary_question, _ = _setup_one(
        PRIMARY_USERNAME, Level.PRIMARY, with_results=False
    )
    return PageTargets(
        cookie=cookie,
        question=question,
        results=results,
        primary_cookie=primary_cookie,
        primary_question=primary_question,
    )


def _setup_one(username: str, level: str, *, with_results: bool) -> tuple[str, str, str]:
    """Create (or reset) one bench learner; return their cookie, question and results paths."""
    from accounts.idle import LAST_ACTIVITY_SESSION_KEY
    from assessments.content import questions_to_json
    from assessments.delivery import _store_results
    from assessments.models import AssessmentAttempt, AttemptAnswer
    from learners.models import Learner
    from partner_api.parsing import _parse_results
    from sandbox import bank
    from sandbox.scoring import score_submission

    user_model = get_user_model()
    user, _ = user_model.objects.get_or_create(username=username)
    user.set_unusable_password()
    user.save()
    learner, _ = Learner.objects.update_or_create(
        user=user,
        defaults={
            "username": username,
            "first_name": "Bench",
            "last_name": "Learner",
            "upstream_user_id": f"bench-pages-{username}",
            "level": level,
            "status": Learner.Status.ACTIVE,
        },
    )
    offset = 0 if with_results else 10
    in_progress_id, completed_id = IN_PROGRESS_ID + offset, COMPLETED_ID + offset
    AssessmentAttempt.objects.filter(assessment_id__in=[in_progress_id, completed_id]).delete()
    questions = bank_questions(level)
    now = timezone.now()
    common = {
        "learner": learner,
        "assessment_version": bank.ASSESSMENT_VERSION,
        "title": bank.LEVELS[level].title,
        "level": level,
        "version": Decimal(bank.ASSESSMENT_VERSION_DECIMAL),
        "content": questions_to_json(questions),
        "session": "123456",
        "started_at": now,
    }
    in_progress = AssessmentAttempt.objects.create(
        assessment_id=in_progress_id, state=AssessmentAttempt.State.IN_PROGRESS, **common
    )
    # Page 1 half answered: the page shows some radios checked, as a returning learner sees.
    first_page = [q for q in questions if q.group == questions[0].group]
    AttemptAnswer.objects.bulk_create(
        AttemptAnswer(attempt=in_progress, question_id=q.id, answer_id=q.answers[1].id)
        for q in first_page[: len(first_page) // 2 + 1]
    )
    if with_results:
        completed = AssessmentAttempt.objects.create(
            assessment_id=completed_id, state=AssessmentAttempt.State.SUBMITTED, **common
        )
        chosen = {q.id: q.answers[i % len(q.answers)].id for i, q in enumerate(questions)}
        _store_results(completed, _parse_results(score_submission(chosen, level)))

    # The configured engine (cached_db with Redis, as production): written to both.
    session = import_module(settings.SESSION_ENGINE).SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "accounts.auth.CaseInsensitiveModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session[LAST_ACTIVITY_SESSION_KEY] = int(time.time())
    session.create()
    return (
        f"sessionid={session.session_key}",
        f"/me/assessments/{in_progress_id}/page/1/",
        f"/me/assessments/{completed_id}/results/",
    )


def start_gunicorn(env: dict[str, str], root: Path = ROOT) -> tuple[subprocess.Popen, int]:
    """Start gunicorn with 2 workers serving the portal (in root); return it and its port."""
    port = free_port()
    process = subprocess.Popen(  # noqa: S603 (our own command line)
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "portal.wsgi:application",
            "--workers=2",
            f"--bind=127.0.0.1:{port}",
            "--log-level=warning",
        ],
        cwd=root,
        env={**env, "DJANGO_SETTINGS_MODULE": "bench.settings"},
    )
    wait_for_port(port, timeout=30)
    return process, port


def fetch(port: int, path: str, cookie: str = "") -> tuple[int, str, list[tuple[str, str]]]:
    """GET one path with the cookie; return status, body and headers."""
    connection = HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", path, headers={"Cookie": cookie} if cookie else {})
    response = connection.getresponse()
    body = response.read().decode()
    connection.close()
    return response.status, body, response.getheaders()


def check_pages(port: int, targets: PageTargets) -> str:
    """Check that each URL answers the real page; return the cookie with a CSRF token added."""
    status, body, headers = fetch(port, targets.question, targets.cookie)
    if status != 200 or 'type="radio"' not in body or "checked" not in body:
        raise RuntimeError(f"question page answered {status}, not the page: {body[:300]}")
    csrf = [v.split(";")[0] for k, v in headers if k.lower() == "set-cookie" and "csrftoken" in v]
    # A browser sends its CSRF cookie back, so a page does not mint a new one every time.
    cookie = "; ".join([targets.cookie, *csrf])
    status, body, _ = fetch(port, targets.results, cookie)
    if status != 200 or "Things that could help" not in body:
        raise RuntimeError(f"results page answered {status}, not the results: {body[:300]}")
    status, body, headers = fetch(port, targets.primary_question, targets.primary_cookie)
    # One question per screen: the first page holds one question's radios and the dots.
    if status != 200 or 'type="radio"' not in body or body.count("<fieldset") != 1:
        raise RuntimeError(f"primary page answered {status}, not one question: {body[:300]}")
    csrf = [v.split(";")[0] for k, v in headers if k.lower() == "set-cookie" and "csrftoken" in v]
    if csrf:
        targets.primary_cookie = "; ".join([targets.primary_cookie.split("; ")[0], *csrf])
    status, body, _ = fetch(port, targets.bare, cookie)
    if status != 200 or body != "ok":
        raise RuntimeError(f"bare view answered {status}: {body[:300]}")
    return cookie


def requests_per_second(port: int, path: str, cookie: str, seconds: float) -> float:
    """Load one URL for a while from a second process; return requests per second."""
    url = f"http://127.0.0.1:{port}{path}"
    if shutil.which("wrk"):
        command = ["wrk", "-t1", "-c4", f"-d{seconds:g}s", url]
        if cookie:
            command[1:1] = ["-H", f"Cookie: {cookie}"]
        output = subprocess.run(  # noqa: S603
            command, capture_output=True, text=True, check=True
        ).stdout
        if "Non-2xx" in output:
            raise RuntimeError(f"wrk saw errors on {path}:\n{output}")
        return float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    output = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "bench.loadgen", url, str(seconds), cookie],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    return float(output.split()[0])


def load_generator_name() -> str:
    return "wrk -t1 -c4" if shutil.which("wrk") else "python threads (bench/loadgen.py), 4 conns"


def measure(env: dict[str, str], rounds: int = 5, seconds: float = 2.0) -> dict:
    """Serve the learner's pages with gunicorn and return requests/s of each, side by side."""
    targets = setup_learner()
    process, port = start_gunicorn(env)
    try:
        cookie = check_pages(port, targets)
        paths = {
            "bare (anonymous)": (targets.bare, ""),
            "bare (signed in)": (targets.bare, cookie),
            "question page": (targets.question, cookie),
            "primary question page": (targets.primary_question, targets.primary_cookie),
            "results page": (targets.results, cookie),
        }
        for path, with_cookie in paths.values():  # warm up every worker and cache
            requests_per_second(port, path, with_cookie, 2)
        samples: dict[str, list[float]] = {name: [] for name in paths}
        for _ in range(rounds):
            for name, (path, with_cookie) in paths.items():
                samples[name].append(requests_per_second(port, path, with_cookie, seconds))
        check_pages(port, targets)  # still signed in: nothing measured a sign-in redirect
    finally:
        process.terminate()
        process.wait(timeout=30)
    rps = {name: median(values) for name, values in samples.items()}
    return {"rps": rps, "samples": samples, "generator": load_generator_name()}


def rows(env: dict[str, str], *, rounds: int, seconds: float) -> list[tuple[str, str, str, str]]:
    """Measure the learner's pages and return the table rows.

    The ratio is taken round by round (each round loads every URL in turn, a few seconds
    each), then the median of the rounds: load from other processes changes slowly enough
    that URLs of one round see the same machine.
    """
    figures = measure(env, rounds=rounds, seconds=seconds)
    rps, samples = figures["rps"], figures["samples"]
    table = [
        (
            f"bare view req/s (gunicorn 2 workers; {figures['generator']}; median of {rounds})",
            f"{rps['bare (anonymous)']:,.0f} anonymous / {rps['bare (signed in)']:,.0f} signed in",
            "",
            "",
        )
    ]
    for name in ("question page", "primary question page", "results page"):
        ratios = [b / p for b, p in zip(samples["bare (anonymous)"], samples[name], strict=True)]
        signed = [b / p for b, p in zip(samples["bare (signed in)"], samples[name], strict=True)]
        ratio = median(ratios)
        table.append(
            (
                f"{name}: req/s; bare/page ratio",
                f"{rps[name]:,.0f} req/s; {ratio:.1f}x vs anonymous bare"
                f" ({median(signed):.1f}x vs signed-in bare)",
                f"<= {TARGET_RATIO:g}x",
                "PASS" if ratio <= TARGET_RATIO else "FAIL",
            )
        )
    return table


if __name__ == "__main__":  # pragma: no cover - for profiling one part on its own
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
    django.setup()
    print(measure(dict(os.environ)))
