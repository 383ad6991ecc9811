"""Staff pages about a learner's sign-in account: resetting the password."""

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_post_parameters

from learners.account_services import learner_password_reset
from learners.forms import LearnerPasswordResetForm
from learners.models import Learner
from portal.access import is_staff_member, staff_required
from portal.addresses import client_address


def _get_learner_for_password_reset(pk: int) -> Learner:
    """Return the registered learner, or 404; never an account that is also staff."""
    learner = get_object_or_404(
        Learner.objects.select_related("user"), pk=pk, status=Learner.Status.ACTIVE
    )
    # A sign-in account linked by hand (in the admin) to a staff or admin user must not let
    # staff take it over by resetting its password.
    if learner.user.is_staff or is_staff_member(learner.user):
        raise Http404
    return learner


@sensitive_post_parameters("new_password1", "new_password2")
@staff_required
def learner_password(request: HttpRequest, pk: int) -> HttpResponse:
    """Set a new password for a learner who forgot theirs."""
    learner = _get_learner_for_password_reset(pk)
    form = LearnerPasswordResetForm(
        request.POST if request.method == "POST" else None, learner=learner
    )
    if request.method == "POST" and form.is_valid():
        learner_password_reset(
            learner=learner,
            password=form.cleaned_data["new_password1"],
            reset_by=request.user,
            address=client_address(request),
        )
        messages.success(
            request,
            _(
                "The password of %(name)s is reset. Give them the new password: they sign in "
                "with the username %(username)s. Any session they had open is signed out."
            )
            % {"name": learner.display_name, "username": learner.username},
        )
        return redirect("learners:detail", pk=learner.pk)
    return render(request, "learners/password.html", {"learner": learner, "form": form})
