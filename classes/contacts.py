"""Keep the school contacts cached for a learner's results page in step with their groups."""

from django.db.models.signals import post_delete, post_save

from assessments.learner_results import forget_group_contacts
from classes.models import GroupMembership, SchoolGroup


def _membership_changed(sender, instance: GroupMembership, **kwargs) -> None:
    forget_group_contacts([instance.learner_id])


def _group_changed(sender, instance: SchoolGroup, **kwargs) -> None:
    # A group's contact is rarely edited; every learner who was ever in it is dropped.
    forget_group_contacts(instance.memberships.values_list("learner_id", flat=True))


def connect_contact_signals() -> None:
    """Drop cached contacts when a membership or a group is saved or deleted."""
    for signal in (post_save, post_delete):
        signal.connect(_membership_changed, sender=GroupMembership, dispatch_uid="contacts.m")
        signal.connect(_group_changed, sender=SchoolGroup, dispatch_uid="contacts.g")
