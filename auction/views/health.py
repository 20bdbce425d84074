"""A light readiness answer (dashboard.md S5): the web process serves and reaches its
database. The supervisor asks it before it prints the URL and the password; it once
loaded the grid page, which on a real-size foundation took longer than its timeout, so
abandoned renders piled up and the banner never came."""

from __future__ import annotations

from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse


def healthz(request: HttpRequest) -> HttpResponse:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as exc:
        return HttpResponse(f"database: {exc}"[:200], status=503, content_type="text/plain")
    return HttpResponse("ok", content_type="text/plain")
