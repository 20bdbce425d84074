"""The edge: input no door can store is refused once, before any view (bbs.md 1.5,
dashboard.md U5).

A NUL character (PostgreSQL can neither store nor compare one) or a lone surrogate in
the path, a query parameter, a form field, a cookie or a header is a 400 here: in the
BBS error shape (JSON) under ``/api/``, as the friendly ``400.html`` page elsewhere. The
views still check what they parse (numbers, lengths, tokens); this keeps every one of
them from having to remember the characters that crash the database.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.template.loader import render_to_string
from django.urls import Resolver404, resolve
from django.utils.deprecation import MiddlewareMixin

from auction.bbs.validation import storable_text
from auction.services.errors import InvalidRequest

log = logging.getLogger(__name__)

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


def upload_limit() -> int:
    """The largest request body, in bytes (``DIEGO_UPLOAD_MAX_MB``: a foundation capture)."""
    return int(float(getattr(settings, "DIEGO_UPLOAD_MAX_MB", 200.0)) * 1024 * 1024)


def too_large_message(length: int | None) -> str:
    """What a person reads when a body is over the limit, in MB (dashboard.md U5)."""
    limit = f"{upload_limit() / 2**20:,.0f} MB"
    if length is None:
        return f"capture too large: over the limit of {limit}"
    return f"capture too large: {length / 2**20:,.1f} MB, the limit is {limit}"


def too_large_body(path: str, length: int | None) -> tuple[str, bytes]:
    """The 413's content type and body: the API's JSON shape under /api/, else the page."""
    message = too_large_message(length)
    if path.startswith(API_PREFIX):
        return "application/json", json.dumps(InvalidRequest(message).as_dict()).encode()
    return "text/html; charset=utf-8", render_to_string("400.html", {"message": message}).encode()


def too_large(request: HttpRequest) -> HttpResponse | None:
    """413 before anything parses a body over the limit (CSRF reads a form's fields). The
    ASGI door (``diego_web.body_limit``) refuses the same before the body is even read;
    this one serves every other door (the test client, a WSGI server)."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length <= upload_limit():
        return None
    content_type, body = too_large_body(request.path, length)
    return HttpResponse(body, status=413, content_type=content_type)


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
        if (response := too_large(request)) is not None:
            return response
        field = unstorable_field(request)
        if field is not None:
            return refusal(request, field)
        return self.get_response(request)

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        if (response := too_large(request)) is not None:
            return response
        field = unstorable_field(request)
        if field is not None:
            return refusal(request, field)
        response: Awaitable[HttpResponse] = self.get_response(request)
        return await response


# --- JSON-only errors under /api/ (bbs.md 1.7) ------------------------------------------
# What an error status becomes when something outside the API's own views answered it
# (Django's CSRF refusal, a 500 from any layer, a too-large body, a bad Host).
_ERROR_TYPES = {401: "Unauthorized", 403: "Unauthorized", 404: "ResourceNotFound",
                409: "ResourceExists"}
_ERROR_MESSAGES = {
    400: "bad request", 401: "authentication required", 403: "forbidden",
    404: "the requested resource could not be found", 405: "method not allowed",
    413: "request body too large", 415: "request body must be JSON (Content-Type: application/json)",
    500: "internal error: the request was not completed",
}


def api_error_json(status: int, message: str | None = None) -> JsonResponse:
    kind = _ERROR_TYPES.get(status, "UnknownError" if status >= 500 else "InvalidRequest")
    text = message or _ERROR_MESSAGES.get(status, "request failed")
    return JsonResponse({"error": {"type": kind, "message": text}}, status=status)


class ApiJsonErrors(MiddlewareMixin):
    """Under ``/api/`` every error is the BBS's JSON shape, whoever produced it.

    Outermost, so it sees the answers of every other layer: an exception anywhere below
    becomes a JSON 500 (logged with its traceback, never sent), and an error page in HTML
    (CSRF's 403, a 400 for a bad Host or body, Django's own 404/500) becomes its JSON twin.
    """

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not request.path.startswith(API_PREFIX):
            return None
        log.error("API request %s %s failed", request.method, request.path, exc_info=exception)
        return api_error_json(500)

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if (not request.path.startswith(API_PREFIX) or response.status_code < 400
                or response.get("Content-Type", "").startswith("application/json")):
            return response
        message = None
        if response.status_code == 403 and getattr(response, "reason_phrase", "") == "Forbidden":
            # CsrfViewMiddleware's refusal: say which check failed, as the API's own does.
            message = "CSRF check failed: send the CSRF token, or use an API token"
        json_response = api_error_json(response.status_code, message)
        if response.has_header("Allow"):
            json_response["Allow"] = response["Allow"]
        return json_response


# --- Content-Security-Policy (dashboard.md AD5) -------------------------------------------
# Every script is a file of ours (static/js, the vendored htmx): none inline, none from
# elsewhere, no eval. Styles allow inline attributes: blocks are sized by ``style="width"``
# and coloured by ``--app`` per instance, and the report card is one self-contained file.
# Sockets and requests go to this origin only; no page may be framed.
CONTENT_SECURITY_POLICY = "; ".join((
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
))


def content_security_policy(get_response: Callable[[HttpRequest], Any]) -> Callable[[HttpRequest], Any]:
    """Sets the policy on every answer that has none (sync and async alike)."""
    def finish(response: HttpResponse) -> HttpResponse:
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        return response

    if iscoroutinefunction(get_response):
        async def middleware_async(request: HttpRequest) -> HttpResponse:
            return finish(await get_response(request))

        return markcoroutinefunction(middleware_async)

    def middleware(request: HttpRequest) -> HttpResponse:
        return finish(get_response(request))

    return middleware


content_security_policy.sync_capable = True  # type: ignore[attr-defined]
content_security_policy.async_capable = True  # type: ignore[attr-defined]
