"""What stored content asks of the pictures and speech rooms: made once, in the background."""

from collections.abc import Iterable

from django.db import transaction

from partner_api import Question
from pictures.services import pictures_wanted
from speech.services import recordings_wanted


def content_media_wanted(questions: Iterable[Question]) -> None:
    """Once the content is stored, ask for its answer pictures and its spoken texts.

    Each room is asked on its own, after the commit, robustly: a failure (the database
    blinking, a queue refusing) is logged by Django and reaches neither the learner, who has
    the questions already, nor the other room. No sweep looks for rows never made (it cannot
    know of them, and searching stored content would cost every minute): rendering the
    content's question pages finds them missing and asks again (assessments.page_markup).
    """
    questions = list(questions)
    icons = [answer.icon for question in questions for answer in question.answers if answer.icon]
    texts = [question.text for question in questions]
    texts += [answer.copy for question in questions for answer in question.answers]

    def ask_for_pictures() -> None:
        pictures_wanted(icons)

    def ask_for_recordings() -> None:
        recordings_wanted(texts)

    # After the commit: the content is kept even if asking fails, and a worker never looks
    # for rows that a rolled-back transaction took with it.
    transaction.on_commit(ask_for_pictures, robust=True)
    transaction.on_commit(ask_for_recordings, robust=True)
