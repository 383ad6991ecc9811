"""WSGI entry point for the partner portal."""

import os

from django.core.handlers.wsgi import WSGIRequest
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")


class PortalRequest(WSGIRequest):
    """Django's request, made even when its Content-Type cannot be parsed.

    A parameter such as `charset*=utf-8''%00` makes Django's parser raise while the request
    is being made, before any middleware: the server's bare 500, missing from the request
    log. Such a body's charset is taken as unreadable instead, so that a form posted with it
    gets portal.middleware.UnreadableFormMiddleware's 400 page like any other.
    """

    def _set_content_type_params(self, meta):
        try:
            super()._set_content_type_params(meta)
        except ValueError:
            self.content_type = meta.get("CONTENT_TYPE", "").split(";", 1)[0].strip().lower()
            self.content_params = {"charset": UNREADABLE}


# No codec has this name: UnreadableFormMiddleware refuses a form body "in" it.
UNREADABLE = "unreadable content-type parameters"

application = get_wsgi_application()
application.request_class = PortalRequest
