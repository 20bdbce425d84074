"""``/foundations/``: upload a cfdot capture from the dashboard (plans.md 3.6).

Operators only (the ``control`` permission, as every control). The page posts the files
to itself as one multipart form; the one service, ``foundation_import``, loads them into
the live cluster or keeps them named. The answer (counts and assumptions) or the reader's
one-line error is shown on the page. Each named foundation can be loaded, replaced by a
new capture (its next version) or deleted (plans.md 3.3); replace and delete ask first
(``confirm``, set by the page once the operator said yes).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from auction.middleware import upload_limit
from auction.permissions import is_operator
from auction.services.foundations import (
    CaptureError,
    FoundationError,
    FoundationNotFound,
    ImportResult,
    age_text,
    foundation_delete,
    foundation_import,
    foundation_list,
    foundation_load_named,
    size_text,
)


@require_http_methods(["GET", "POST"])
def foundations_page(request: HttpRequest) -> HttpResponse:
    allowed = request.user.is_authenticated and is_operator(request.user)
    context: dict[str, object] = {"page": "foundations", "live_view": "foundations", "allowed": allowed,
                                  "limit_bytes": upload_limit(),
                                  "limit_mb": round(upload_limit() / 1024 / 1024)}
    status = 200
    if request.method == "GET":
        context["result"] = request.session.pop("foundation_result", None)
    if request.method == "POST":
        if not allowed:
            context["error"] = "you need the control permission to import a foundation"
            status = 403
        else:
            try:
                if request.POST.get("delete"):
                    context["deleted"] = _delete(request)
                    context["foundations"] = _listed()
                    return render(request, "foundations/page.html", context)
                result = _post(request)
                context["result"] = kept = result.as_dict()
                # A load into live moves the world epoch, and every open page reloads,
                # this one too: the answer waits in the session for that reload.
                request.session["foundation_result"] = kept
            except (CaptureError, FoundationError, FoundationNotFound) as exc:
                context["error"] = exc.message
                status = 413 if exc.message.startswith("capture too large") else 400
    context["foundations"] = _listed()
    return render(request, "foundations/page.html", context, status=status)


def _listed() -> list[dict[str, object]]:
    return [{**f, "size": size_text(f["size_bytes"]), "age": age_text(f["age_s"]),
             "captured": (f["captured_at"] or "")[:16].replace("T", " ") + " UTC"}
            for f in foundation_list()]


def _post(request: HttpRequest) -> ImportResult:
    length = int(request.META.get("CONTENT_LENGTH") or 0)
    if length > upload_limit():
        raise FoundationError(f"capture too large: {length} bytes, the limit is {upload_limit()} bytes")
    if request.POST.get("load"):
        return foundation_load_named(request.POST["load"], user=request.user, source="dashboard")
    files = request.FILES.getlist("file")
    if not files:
        raise FoundationError("choose the files of a capture first")
    replace = request.POST.get("replace", "").strip()
    if replace:
        _confirmed(request, f"replace foundation {replace!r}")
        name: str | None = replace
    else:
        name = request.POST.get("name", "").strip() if request.POST.get("mode") == "keep" else None
        if name == "":
            raise FoundationError("give the foundation a name to keep it")
    return foundation_import([(f.name or "upload", f) for f in files], as_name=name,
                             replace=bool(replace), user=request.user, source="dashboard",
                             limit_bytes=upload_limit())


def _delete(request: HttpRequest) -> dict[str, str]:
    name = request.POST["delete"]
    _confirmed(request, f"delete foundation {name!r}")
    return {"name": name, "version": foundation_delete(name, user=request.user, source="dashboard")}


def _confirmed(request: HttpRequest, what: str) -> None:
    """A replace or delete the operator did not confirm (the page asks) does nothing."""
    if request.POST.get("confirm") != "yes":
        raise FoundationError(f"confirm first: {what} cannot be undone")
