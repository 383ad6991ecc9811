"""The question-page form: one radio group per question, built from stored content."""

from django import forms
from django.utils.translation import gettext

from assessments.taking import QuestionPage


def field_name(question: dict) -> str:
    """Return the form field name of a question: its position in the assessment."""
    return f"q{question['position']}"


class QuestionPageForm(forms.Form):
    """Choose one answer per question of a page; unanswered questions are reported, not lost."""

    def __init__(self, *args, page: QuestionPage, **kwargs):
        super().__init__(*args, **kwargs)
        self.page = page
        for question in page.questions:
            self.fields[field_name(question)] = forms.ChoiceField(
                label=question["text"],
                choices=[(answer["id"], answer["copy"]) for answer in question["answers"]],
                widget=forms.RadioSelect,
                required=False,
                error_messages={"invalid_choice": gettext("Choose one of the answers shown.")},
            )

    def fields_with_questions(self) -> list[tuple[forms.BoundField, dict]]:
        """Return each question's bound field beside the question, in display order."""
        return [(self[field_name(question)], question) for question in self.page.questions]

    def choices(self) -> dict[str, str]:
        """Return the valid choices made on this page as question id -> answer id."""
        data = getattr(self, "cleaned_data", {})
        return {
            question["id"]: data[field_name(question)]
            for question in self.page.questions
            if data.get(field_name(question))
        }

    def require_every_answer(self) -> bool:
        """Add an error to each unanswered question; return whether all are answered."""
        for question in self.page.questions:
            name = field_name(question)
            if name not in self.errors and not self.cleaned_data.get(name):
                self.add_error(name, gettext("Choose an answer to this question."))
        return not self.errors
