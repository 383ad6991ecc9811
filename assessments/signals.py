"""Signals other apps listen to, so assessments never imports them."""

from django.dispatch import Signal

# Sent inside the transaction that stores an attempt's results, once per result, with
# `result` (an AssessmentResult whose focus_areas are saved). A receiver that raises rolls
# the storing back, and delivery tries again later.
result_stored = Signal()
