"""Signals of the learners app, so it never imports the apps that listen."""

from django.dispatch import Signal

# Sent by learners.services.learner_details_change when a learner's level changed, with
# `learner`, inside the transaction that saves it: the dashboard's read model, which copies
# each learner's level, counts the learner under the new one (a receiver that raises rolls
# the change back).
learner_level_changed = Signal()
