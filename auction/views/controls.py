"""Operator controls (dashboard.md C1, C2, C4, D3): thin POST views over the services.

Each needs an operator (``auction.permissions.is_operator``: the ``auction.control``
permission, which superusers have and staff only when granted), a CSRF token, and
answers with a short status line for htmx (or a redirect back without JavaScript). Bad input is a 400 with the BBS's words.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from auction.permissions import is_operator
from auction.selectors.controls import scale_question
from auction.services import operator
from auction.services.auction_settings import auction_settings_update
from auction.services.cells import chaos_run
from auction.services.errors import BBSError, InvalidRequest
from auction.sim.chaos import ACTIONS

SOURCE = operator.SOURCE


class Question(Exception):
    """A control that asks before it acts (dashboard.md C7)."""

    def __init__(self, text: str, fields: dict[str, str]) -> None:
        super().__init__(text)
        self.text, self.fields = text, fields


def _answer(request: HttpRequest, message: str, status: int = 200) -> HttpResponse:
    if request.headers.get("HX-Request") or status != 200:
        return render(request, "partials/controls_result.html",
                      {"message": message, "error": status != 200}, status=status)
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, {request.get_host()}, request.is_secure()):
        back = "/lrps/"
    return redirect(back or "/lrps/")


def control(view: Callable[[HttpRequest], str]) -> Callable[[HttpRequest], HttpResponse]:
    """POST only, ``control`` permission, BBS errors as 400 with their message."""

    @require_POST
    @wraps(view)
    def wrapped(request: HttpRequest) -> HttpResponse:
        if not request.user.is_authenticated:
            return _answer(request, "sign in to use the controls (admin login)", 403)
        if not is_operator(request.user):
            return _answer(request, "you need the control permission", 403)
        try:
            return _answer(request, view(request))
        except Question as question:
            # C7: nothing changed yet; the answer is a form that repeats the request, confirmed.
            return render(request, "partials/controls_confirm.html", {
                "question": question.text, "fields": question.fields, "action": request.path})
        except BBSError as exc:
            return _answer(request, exc.message, exc.status if exc.status < 500 else 400)

    return wrapped


def _field(request: HttpRequest, name: str) -> str:
    value = request.POST.get(name, "").strip()
    if not value:
        raise InvalidRequest(f"Invalid field: {name}")
    return value


@control
def clock(request: HttpRequest) -> str:
    action = _field(request, "action")
    user = request.user
    if action == "pause":
        operator.operator_clock_pause(user)
        return "clock paused"
    if action == "resume":
        operator.operator_clock_resume(user)
        return "clock running"
    if action == "speed":
        speed = _field(request, "speed")
        operator.operator_clock_speed(speed, user)
        return f"speed {speed}×" if speed != "max" else "speed max"
    if action == "step":
        upcoming = operator.operator_clock_step_next(user)
        return f"stepped to the next event: {upcoming.what}" if upcoming else "stepped"
    raise InvalidRequest("Invalid field: action")


@control
def chaos(request: HttpRequest) -> str:
    """Any chaos action of the registry (``auction.sim.chaos``) the dashboard offers; the
    crash form may name the instance as ``<process_guid>.<index>``."""
    name = _field(request, "action")
    action = ACTIONS.get(name)
    if action is None or not action.dashboard:
        raise InvalidRequest("Invalid field: action")
    raw = {p.name: request.POST.get(p.name, "").strip() for p in action.params}
    if name == "scale" and request.POST.get("confirm") != "1":
        doubts = scale_question(raw.get("process_guid", ""), raw.get("instances", ""))
        if doubts:
            raise Question(doubts, {**raw, "action": name})
    instance = request.POST.get("instance", "").strip()
    if instance and "process_guid" in raw and "index" in raw:
        guid, _, index = instance.rpartition(".")
        if not guid or not index:
            raise InvalidRequest("Invalid field: instance (expected <process_guid>.<index>)")
        raw.update(process_guid=guid, index=index)
    return chaos_run(name, raw, source=SOURCE, user=request.user)


@control
def scenario(request: HttpRequest) -> str:
    name = _field(request, "name")
    operator.operator_scenario_load(name, request.user)
    return f"scenario {name} loaded"


@control
def domain(request: HttpRequest) -> str:
    action, name = _field(request, "action"), _field(request, "domain")
    if action == "bump":
        ttl = _field(request, "ttl")
        operator.operator_domain_bump(name, ttl, request.user)
        return f"{name} bumped ({'never expires' if ttl == 'never' else f'{ttl} s'})"
    if action == "expire":
        operator.operator_domain_expire(name, request.user)
        return f"{name} expired now: stale"
    raise InvalidRequest("Invalid field: action")


@control
def auction_order(request: HttpRequest) -> str:
    """auction.md 2.1: the auctioneer in the documented order or in the Go binary's."""
    order = _field(request, "order")
    if order not in ("spec", "go"):
        raise InvalidRequest("Invalid field: order")
    auction_settings_update({"go_compat": order == "go"}, source=SOURCE, user=request.user)
    return ("auctions now run in Go order (tasks first in an all-index-0 batch, Go's sort)"
            if order == "go" else "auctions now run in the documented order")
