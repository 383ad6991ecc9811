from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = gettext_lazy("Staff accounts and sign-in")

    def ready(self) -> None:
        from accounts.session_ending import connect_session_ending_signals
        from accounts.user_cache import connect_user_cache_signals
        from kit.row_cache import connect_row_cache_signals

        # The signed-in user kept in the shared cache is dropped when the account changes.
        connect_user_cache_signals()
        connect_row_cache_signals()
        # A deactivated account's sessions end at once, not at their next request.
        connect_session_ending_signals()
