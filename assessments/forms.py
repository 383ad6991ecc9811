"""The question-page form: one radio group per question, built from stored content."""

from django import forms
from django.utils.translation import gettext

from assessments.taking import PageQuestion, QuestionPage


def field_name(entry: PageQuestion) -> str:
    """Return the form field name of a question: its position in the assessment."""
    return f"q{entry.position}"


class QuestionPageForm(forms.Form):
    """Choose one answer per question of a page; unanswered questions are reported, not lost."""

    def __init__(self, *args, page: QuestionPage, **kwargs):
        super().__init__(*args, **kwargs)
        self.page = page
        for entry in page.questions:
            self.fields[field_name(entry)] = forms.ChoiceField(
                label=entry.question.text,
                choices=[(answer.id, answer.copy) for answer in entry.question.answers],
                widget=forms.RadioSelect,
                required=False,
                error_messages={"invalid_choice": gettext("Choose one of the answers shown.")},
            )

    def choices(self) -> dict[str, str]:
        """Return the valid choices made on this page as question id -> answer id."""
        data = getattr(self, "cleaned_data", {})
        return {
            entry.question.id: data[field_name(entry)]
            for entry in self.page.questions
            if data.get(field_name(entry))
        }

    def require_every_answer(self) -> bool:
        """Add an error to each unanswered question; return whether all are answered."""
        for entry in self.page.questions:
            name = field_name(entry)
            if name not in self.errors and not self.cleaned_data.get(name):
                self.add_error(name, gettext("Choose an answer to this question."))
        return not self.errors
