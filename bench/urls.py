"""The portal's URLs plus a bare view: the floor a page's cost is measured against."""

from django.http import HttpRequest, HttpResponse
from django.urls import path

from portal.urls import urlpatterns as portal_urlpatterns


def bare(request: HttpRequest) -> HttpResponse:
    """Return a short string through the same middleware as every page."""
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [path("bench/bare/", bare, name="bench_bare"), *portal_urlpatterns]
