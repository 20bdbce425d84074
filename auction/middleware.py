"""The edge: input no door can store is refused once, before any view (bbs.md 1.5,
dashboard.md U5).

A NUL character (PostgreSQL can neither store nor compare one) or a lone surrogate in
the path, a query parameter, a form field, a cookie or a header is a 400 here: in the
BBS error shape (JSON) under ``/api/``, as the friendly ``400.html`` page elsewhere. The
views still check what they parse (numbers, lengths, tokens); this keeps every one of
them from having to remember the characters that crash the database.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.template.loader import render_to_string
from django.urls import Resolver404, resolve

from auction.bbs.validation import storable_text
from auction.services.errors import InvalidRequest

API_PREFIX = "/api/"
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _first_bad(pairs: Iterable[tuple[str, Any]]) -> str | None:
    for key, value in pairs:
        if not storable_text(key):
            return "parameter name"
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and not storable_text(v) for v in values):
            return key
    return None


def _path_field(path: str) -> str:
    """The route's parameter holding the bad text (``process_guid``), else ``path``."""
    try:
        match = resolve(path)
    except Resolver404:
        return "path"
    return next((name for name, value in match.kwargs.items()
                 if isinstance(value, str) and not storable_text(value)), "path")


def unstorable_field(request: HttpRequest) -> str | None:
    """The name of the first part of the request holding unstorable text, or None."""
    if not storable_text(request.path):
        return _path_field(request.path_info)
    try:
        bad = _first_bad(request.GET.lists())
    except TooManyFieldsSent:
        return "query"
    if bad:
        return bad
    if not storable_text(request.META.get("QUERY_STRING", "")):
        return "query"
    bad = _first_bad(request.COOKIES.items()) or _first_bad(request.headers.items())
    if bad:
        return bad
    if (request.method == "POST" and not request.path.startswith(API_PREFIX)
            and request.content_type in FORM_TYPES):
        # The API reads JSON bodies itself (auction/api/http.json_body); pages read forms.
        try:
            return _first_bad(request.POST.lists())
        except (MultiPartParserError, RequestDataTooBig, TooManyFieldsSent):
            return "body"
    return None


def refusal(request: HttpRequest, field: str) -> HttpResponse:
    error = InvalidRequest(f"Invalid field: {field}")
    if request.path.startswith(API_PREFIX):
        return JsonResponse(error.as_dict(), status=error.status)
    # No context processors: the page needs no query, so it renders in an async request too.
    return HttpResponse(render_to_string("400.html", {"message": error.message}), status=400)


class RefuseUnstorableInput:
    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        field = unstorable_field(request)
        if field is not None:
            return refusal(request, field)
        return self.get_response(request)

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        field = unstorable_field(request)
        if field is not None:
            return refusal(request, field)
        response: Awaitable[HttpResponse] = self.get_response(request)
        return await response
