"""Sign-in: usernames are unique without regard to case, so sign-in ignores case too."""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend


class CaseInsensitiveModelBackend(ModelBackend):
    """Django's backend, matching the username case-insensitively ("Amira.K" = "amira.k")."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None or password is None:
            return None
        User = get_user_model()
        matches = list(User._default_manager.filter(username__iexact=username)[:2])
        if len(matches) != 1:
            # Unknown, or two accounts differing only in case (possible only for accounts
            # made outside the portal): fall back to the exact match.
            return super().authenticate(request, username=username, password=password, **kwargs)
        user = matches[0]
        if user.check_password(password) and self.user_can_authenticate(user):
            return user
        return None
