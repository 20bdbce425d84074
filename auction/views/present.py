"""The presenter's page (dashboard.md C5): take or release the world's presenter lock."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from auction.live.presenter import (
    PERMISSION,
    PresenterError,
    PresenterHeld,
    current_presenter,
    presenter_release,
    presenter_take,
)
from auction.views.grid import grid_context


@login_required
def present(request: HttpRequest) -> HttpResponse:
    if not request.user.has_perm(PERMISSION):
        return render(request, "present/forbidden.html", status=403)
    error = held_by = ""
    if request.method == "POST":
        action = request.POST.get("action")
        try:
            if action == "release":
                presenter_release(request.user)
                return redirect("present")
            if action == "take":
                presenter_take(request.user, confirm=request.POST.get("confirm") == "1")
                return redirect(request.get_full_path())
            error = "unknown action"
        except PresenterHeld as exc:
            held_by = exc.holder
        except PresenterError as exc:
            error = str(exc)
    presenter = current_presenter()
    context = grid_context(request)
    context.update(page="present", presenter=presenter, error=error, held_by=held_by,
                   presenting=presenter is not None and presenter.user_id == request.user.pk,
                   presenter_page=presenter is not None and presenter.user_id == request.user.pk)
    return render(request, "present/page.html", context)
