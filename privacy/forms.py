from django import forms
from django.utils.translation import gettext_lazy, ngettext_lazy

from privacy.models import RecordsHold

REASON_MAX_LENGTH = RecordsHold._meta.get_field("reason").max_length


class RecordsHoldForm(forms.Form):
    """Why a member of staff keeps a learner's records until they lift the hold (optional)."""

    reason = forms.CharField(
        required=False,
        label=gettext_lazy("Why (optional)"),
        help_text=gettext_lazy(
            "For the safeguarding leads, for example: a referral is open. Shown on the "
            "learner's record; erased with their personal data."
        ),
        max_length=REASON_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 3}),
        error_messages={
            "max_length": ngettext_lazy(
                "Keep the reason under %(limit_value)d character",
                "Keep the reason under %(limit_value)d characters",
                "limit_value",
            )
        },
    )


class HoldLiftForm(forms.Form):
    """Why a safeguarding lead lifts a hold (required): kept with the hold, not in the trail."""

    reason = forms.CharField(
        label=gettext_lazy("Why the hold can be lifted"),
        help_text=gettext_lazy(
            "For example: the referral is closed and the records need not be kept longer. "
            "Shown on the learner's record; erased with their personal data."
        ),
        max_length=REASON_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 3}),
        error_messages={
            "required": gettext_lazy("Say why the hold can be lifted."),
            "max_length": RecordsHoldForm.base_fields["reason"].error_messages["max_length"],
        },
    )

    def __init__(self, *args, **kwargs):
        # Prefixed: the hold page shows this form beside the one placing a hold.
        super().__init__(*args, prefix="lift", **kwargs)
