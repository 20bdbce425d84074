"""Template context every page needs for its live socket."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest


def live(request: HttpRequest) -> dict[str, Any]:
    return {"world": settings.DIEGO_WORLD}
