"""The API's HTTP plumbing: method dispatch, JSON in and out, BBS errors, paging.

Every answer is JSON, errors included (``{"error": {"type", "message"}}``, bbs.md
1.2): a client scripting the BBS never has to parse an HTML error page. A request the
API cannot understand is an InvalidRequest, never a 500.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.db.models import Q, QuerySet
from django.http import HttpRequest, JsonResponse
from django.http.request import RawPostDataException
from django.views.decorators.csrf import csrf_exempt

from auction.bbs.validation import storable_text
from auction.services.errors import BBSError, InvalidRequest

log = logging.getLogger(__name__)

DEFAULT_PAGE_SIZE = 500
MAX_PAGE_SIZE = 1000


class MethodNotAllowed(BBSError):
    type = "InvalidRequest"
    status = 405


class UnsupportedMediaType(BBSError):
    type = "InvalidRequest"
    status = 415


# A body the API reads is JSON: application/json, or a vendor type ending in +json.
def _json_media_type(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def error_response(error: BBSError) -> JsonResponse:
    return JsonResponse(error.as_dict(), status=error.status)


Handler = Callable[..., JsonResponse]
View = Callable[..., Any]


def answers(*methods: str) -> Callable[[View], View]:
    """Name the HTTP methods a hand-written view answers, as ``endpoint`` views do
    (``view.methods``): the OpenAPI test compares them with the document."""

    def mark(view: View) -> View:
        view.methods = tuple(m.upper() for m in methods)  # type: ignore[attr-defined]
        return view

    return mark


def endpoint(**handlers: Handler) -> Callable[..., JsonResponse]:
    """One URL, a handler per HTTP method (``get=…, post=…``).

    CSRF is not left to the middleware: a token-authenticated script has no CSRF
    cookie, so ``auth.operator`` checks CSRF itself for session-authenticated writes.
    """
    allowed = sorted(name.upper() for name in handlers)

    @csrf_exempt
    def view(request: HttpRequest, **kwargs: Any) -> JsonResponse:
        handler = handlers.get(request.method.lower()) if request.method else None
        if request.method == "HEAD" and "get" in handlers:
            handler = handlers["get"]
        if handler is None:
            response = error_response(MethodNotAllowed(
                f"method {request.method} not allowed; allowed: {', '.join(allowed)}"))
            response["Allow"] = ", ".join(allowed)
            return response
        try:
            for name, value in kwargs.items():
                # PostgreSQL cannot store or even compare a NUL; query values are refused
                # the same way (query_text).
                if isinstance(value, str) and "\x00" in value:
                    raise InvalidRequest(f"Invalid field: {name}")
            return handler(request, **kwargs)
        except BBSError as error:
            return error_response(error)

    view.methods = tuple(allowed)  # type: ignore[attr-defined]
    return view


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def json_body(request: HttpRequest) -> dict[str, Any]:
    """The request's JSON object. NaN/Infinity, bad UTF-8 and non-objects are refused;
    a body sent as anything but JSON is a 415 (bbs.md 1.7)."""
    raw: bytes | None
    try:
        raw = request.body
    except RequestDataTooBig:
        raise InvalidRequest("request body too large") from None
    except RawPostDataException:
        raw = None  # a form body, already parsed by the CSRF check of a session write
    if raw != b"" and not _json_media_type(request.headers.get("Content-Type", "")):
        raise UnsupportedMediaType(
            "request body must be JSON (Content-Type: application/json), not "
            f"{request.headers.get('Content-Type') or 'no Content-Type'}"[:200])
    if raw is None:
        raise InvalidRequest("request body must be JSON (Content-Type: application/json)")
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InvalidRequest(f"invalid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise InvalidRequest("request body must be a JSON object")
    return body


def ok(data: dict[str, Any], status: int = 200) -> JsonResponse:
    return JsonResponse(data, status=status, json_dumps_params={"ensure_ascii": False})


def nanoseconds(sim_seconds: float | None) -> int:
    """Diego shows times as integer nanoseconds (bbs.md 0); absent times are 0."""
    if sim_seconds is None:
        return 0
    # Diego's int64; a row stored before the limits of bbs.md 1.6 may lie beyond it.
    ns = sim_seconds * 1e9
    if not math.isfinite(ns) or abs(ns) >= 2**63:
        return (2**63 - 1) if ns > 0 else -(2**63 - 1)
    return int(round(ns))


def query_int(request: HttpRequest, name: str) -> int | None:
    value = request.GET.get(name)
    if value is None or value == "":
        return None
    try:
        number = int(value)
    except ValueError:
        raise InvalidRequest(f"Invalid field: {name}") from None
    if not -(2**31) <= number < 2**31:
        raise InvalidRequest(f"Invalid field: {name}")
    return number


def query_text(request: HttpRequest, name: str) -> str | None:
    value = request.GET.get(name)
    if value is not None and ("\x00" in value or len(value) > 1024):
        raise InvalidRequest(f"Invalid field: {name}")
    return value


# -- paging -----------------------------------------------------------------------------
# Keyset paging: the token is the last row's sort key, so a page costs the same however
# deep it is, and rows written between pages are neither skipped nor repeated.


def _encode_token(key: Sequence[Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode().rstrip("=")


MAX_TOKEN_LENGTH = 1024


def _decode_token(token: str, types: Sequence[type]) -> list[Any]:
    """The key a page token holds; anything else is refused before any query runs."""
    if len(token) > MAX_TOKEN_LENGTH:
        raise InvalidRequest("Invalid field: page_token")
    try:
        padded = token + "=" * (-len(token) % 4)
        key = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")).decode("utf-8"))
    except (ValueError, UnicodeError, binascii.Error):
        raise InvalidRequest("Invalid field: page_token") from None
    if (not isinstance(key, list) or len(key) != len(types)
            or not all(type(k) is t for k, t in zip(key, types, strict=True))
            or any(isinstance(k, int) and not -(2**31) <= k < 2**31 for k in key)
            or any(isinstance(k, str) and not storable_text(k) for k in key)):
        raise InvalidRequest("Invalid field: page_token")
    return key


def _after(fields: Sequence[str], key: Sequence[Any]) -> Q:
    """Rows strictly after ``key`` in the (f1, f2, …) lexicographic order."""
    condition = Q()
    for i, name in enumerate(fields):
        step = Q(**{f"{name}__gt": key[i]})
        for j in range(i):
            step &= Q(**{fields[j]: key[j]})
        condition |= step
    # The leading column's range is implied, but spelled out it lets the database walk the
    # key's index from the token instead of filtering the whole table.
    return Q(**{f"{fields[0]}__gte": key[0]}) & condition


def page(request: HttpRequest, queryset: QuerySet,
         order: Sequence[tuple[str, type]]) -> tuple[list[Any], str | None]:
    """One page of ``queryset`` ordered by ``order`` (field, type), and the next page's token."""
    fields = [name for name, _ in order]
    size = query_int(request, "page_size")
    if size is None:
        size = DEFAULT_PAGE_SIZE
    if not 1 <= size <= MAX_PAGE_SIZE:
        raise InvalidRequest("Invalid field: page_size")
    token = request.GET.get("page_token")
    queryset = queryset.order_by(*fields)
    if token:
        key = _decode_token(token, [t for _, t in order])
        queryset = queryset.filter(_after(fields, key))
    rows = list(queryset[: size + 1])
    if len(rows) <= size:
        return rows, None
    rows = rows[:size]
    last = rows[-1]
    return rows, _encode_token([getattr(last, name) for name in fields])
