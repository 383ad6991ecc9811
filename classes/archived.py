"""Last year's classes are read-only: the refusal services raise, and how pages answer it."""

from collections.abc import Callable
from functools import wraps

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext as _

from classes.models import SchoolGroup


class GroupArchived(Exception):
    """The group is archived (last year's class): nothing about it changes any more."""

    def __init__(self, group: SchoolGroup):
        super().__init__(f"group {group.pk} is archived")
        self.group = group

    @property
    def message(self) -> str:
        """Return what the member of staff is told."""
        return _(
            "%(name)s (%(year)s) was archived on %(date)s: it is last year's class, kept "
            "read-only for its history. Nothing about it can be changed."
        ) % {
            "name": self.group.name,
            "year": self.group.academic_year,
            "date": date_format(timezone.localdate(self.group.archived_at), "DATE_FORMAT"),
        }


def group_check_open(group: SchoolGroup) -> None:
    """Raise GroupArchived if the group (as read) is archived."""
    if group.archived_at is not None:
        raise GroupArchived(group)


def group_lock_open(group: SchoolGroup) -> SchoolGroup:
    """Lock the group's row and return it, or raise GroupArchived (read under the lock)."""
    locked = SchoolGroup.objects.select_for_update().get(pk=group.pk)
    group_check_open(locked)
    return locked


def archived_refused(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Answer a change to an archived group with its class page, saying why nothing changed."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except GroupArchived as archived:
            messages.error(request, archived.message)
            return redirect("classes:detail", pk=archived.group.pk)

    return wrapper
