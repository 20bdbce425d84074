"""``/api/v1/metrics``: the BBS's metrics (bbs.md 9) as the last convergence pass left them,
with the running counters."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from auction.api.auth import reader
from auction.api.http import endpoint, nanoseconds, ok
from auction.models import ConvergenceRun
from auction.services.counters import counters_all


def _get(request: HttpRequest) -> JsonResponse:
    reader(request)
    last = ConvergenceRun.objects.order_by("-id").first()
    return ok({
        "at": nanoseconds(last.at) if last else None,
        "metrics": dict(last.metrics) if last else {},
        "counters": counters_all(),
    })


metrics = endpoint(get=_get)
