"""The side panel (dashboard.md G9, G10): a fragment for #panel, or a page when opened directly."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from auction.permissions import is_operator
from auction.selectors import panel as selectors
from auction.selectors.clock import clock_view
from auction.services import cells as chaos
from auction.services.errors import BBSError

# The panel's buttons: the registry's cell actions (``auction.sim.chaos``).
CELL_ACTIONS = {"drain": "cell_drain", "fail": "cell_fail", "restore": "cell_restore"}


def _respond(request: HttpRequest, template: str, context: dict, status: int = 200) -> HttpResponse:
    if request.headers.get("HX-Request") == "true" and request.headers.get("HX-History-Restore-Request") != "true":
        return render(request, template, context, status=status)
    return render(request, "panel/page.html",
                  {"panel_template": template, "clock": clock_view(), "live_view": "grid",
                   "page": "panel", **context}, status=status)


def _missing(request: HttpRequest, what: str) -> HttpResponse:
    return _respond(request, "panel/missing.html", {"what": what}, status=404)


def instance_panel(request: HttpRequest, guid: str, index: int) -> HttpResponse:
    view = selectors.instance_panel(guid, index)
    if view is None:
        return _missing(request, f"instance {guid}.{index}")
    return _respond(request, "panel/instance.html", {"p": view})


def task_panel(request: HttpRequest, guid: str) -> HttpResponse:
    view = selectors.task_panel(guid)
    if view is None:
        return _missing(request, f"task {guid}")
    return _respond(request, "panel/task.html", {"p": view})


def _can_control(request: HttpRequest) -> bool:
    return is_operator(request.user)  # the same operators as the page controls and the API


def cell_panel(request: HttpRequest, cell_id: str) -> HttpResponse:
    view = selectors.cell_panel(cell_id)
    if view is None:
        return _missing(request, f"cell {cell_id}")
    return _respond(request, "panel/cell.html", {"p": view, "can_control": _can_control(request)})


@require_POST
def cell_action(request: HttpRequest, cell_id: str, action: str) -> HttpResponse:
    """Drain, fail or restore from the panel (dashboard.md G9, C2): the chaos services, audited."""
    if action not in CELL_ACTIONS:
        raise Http404(f"no cell action {action}")
    status, notice, error = 200, "", ""
    if not _can_control(request):
        status, error = 403, "needs an operator: log in with the control permission"
    else:
        try:
            notice = chaos.chaos_run(CELL_ACTIONS[action], {"cell": cell_id}, source="dashboard",
                                     user=request.user)
        except BBSError as exc:
            status, error = (exc.status if exc.status < 500 else 409), exc.message
    view = selectors.cell_panel(cell_id)
    if view is None:
        return _missing(request, f"cell {cell_id}")
    return render(request, "panel/cell.html", {"p": view, "can_control": _can_control(request),
                                               "notice": notice, "action_error": error}, status=status)
