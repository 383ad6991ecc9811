"""Signals of the shared layer, so the apps that send them never import those that listen."""

from django.dispatch import Signal

# Sent by accounts when an account is given a safeguarding role (DSL or deputy) it did not
# hold, with `user`, `role` and `granted_by`, inside the transaction that grants it: the
# safeguarding app sends the new lead a test alert.
safeguarding_role_granted = Signal()

# Sent by accounts.sign_in_throttle when a sign-in scope is locked, with `scope` (account,
# account_address or address): counted on /metrics (ops.metrics).
sign_in_lock_set = Signal()
