"""Pictures and recordings never asked for are asked for by the first rendering of their pages."""

import re
import time

import pytest

from assessments import page_markup
from assessments.taking import PRIMARY_LEVEL
from pictures.models import Picture
from speech.models import Recording
from tests.factories import MOON, SUN, make_attempt, pictured_content, ready_picture
from tests.journeys import page_showing, page_url

pytestmark = pytest.mark.backend


def forget_rendered_pages() -> None:
    page_markup.cache.clear()
    page_markup.RECENT_PAGES.clear()


def test_content_without_media_rows_asks_for_them_once_then_settles(
    client, learner, queued_tasks, django_capture_on_commit_callbacks, monkeypatch
):
    learner.level = PRIMARY_LEVEL
    learner.save(update_fields=["level"])
    attempt = make_attempt(learner, content=pictured_content())
    forget_rendered_pages()
    assert not Picture.objects.exists() and not Recording.objects.exists()
    client.force_login(learner.user)

    with django_capture_on_commit_callbacks(execute=True):
        html = page_showing(client, page_url(attempt), "How do you feel at school?")
    language = re.search(r'data-lang="([^"]+)"', html).group(1)

    assert Picture.objects.filter(state=Picture.State.PENDING).count() == 2  # sun and moon
    texts = {q.text for q in attempt.questions} | {
        a.copy for q in attempt.questions for a in q.answers
    }
    spoken = Recording.objects.filter(language=language, state=Recording.State.PENDING)
    assert set(spoken.values_list("text", flat=True)) == texts
    key = next(k for k in page_markup.RECENT_PAGES if k.split(":")[-2] == str(attempt.pk))
    assert page_markup.RECENT_PAGES[key][0] <= time.time() + page_markup.UNSETTLED_SECONDS

    # The worker makes them all; the next rendering is settled and shows them.
    Picture.objects.all().delete()
    ready_picture(SUN)
    ready_picture(MOON)
    Recording.objects.update(state=Recording.State.READY, content_type="audio/wav", audio=b"RIFF")
    for number, recording in enumerate(Recording.objects.all()):
        Recording.objects.filter(pk=recording.pk).update(digest=f"{number + 10:064x}")
    later = time.time() + page_markup.UNSETTLED_SECONDS + 1
    monkeypatch.setattr(page_markup.time, "time", lambda: later)

    with django_capture_on_commit_callbacks(execute=True) as asked:
        html = page_showing(client, page_url(attempt), "How do you feel at school?")

    assert asked == []  # nothing missing: nothing asked for again
    assert html.count('<img src="/pictures/') == 2
    assert page_markup.RECENT_PAGES[key][0] is None  # settled: kept as long as any markup
