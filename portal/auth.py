"""The sign-in backend's old path, for sessions signed in before it moved to accounts.auth.

A session records the backend that signed it in by its dotted path, and Django reads the user
of a session only through a backend listed in AUTHENTICATION_BACKENDS under that path. Listed
second, this one keeps those sessions signed in; it never signs anyone in itself, so a wrong
password is checked and counted once, by accounts.auth.
"""

from accounts.auth import CaseInsensitiveModelBackend as AccountsBackend


class CaseInsensitiveModelBackend(AccountsBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        return None

    def has_perm(self, user_obj, perm, obj=None) -> bool:
        return False  # accounts.auth, listed first, has answered already

    def has_module_perms(self, user_obj, app_label) -> bool:
        return False
