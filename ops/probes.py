"""/healthz, /readyz and /metrics, answered before the rest of the middleware.

A load balancer or Prometheus asks by an address (Host: 10.0.0.5) that ALLOWED_HOSTS need not
list, over plain http inside the network, without cookies, every second. So these paths are
answered here, second in MIDDLEWARE (after the request log): no host check, no https redirect,
no session read or saved (a probe is nobody's activity), no CSRF or locale work. None of the
three uses the Host header, so skipping its check opens nothing.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from ops.health import healthz, readyz
from ops.metrics import metrics_view

PROBES: dict[str, Callable[[HttpRequest], HttpResponse]] = {
    "/healthz": healthz,
    "/readyz": readyz,
    "/metrics": metrics_view,
}


class ProbeMiddleware:
    """Answer the probe paths at once; pass every other request on."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        probe = PROBES.get(request.path_info)
        if probe is None:
            return self.get_response(request)
        request.probe = request.path_info
        if request.method not in ("GET", "HEAD"):
            return HttpResponse(status=405, headers={"Allow": "GET, HEAD"})
        return probe(request)
