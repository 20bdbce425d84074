"""The BBS's error types (bbs.md 1.2; the API maps them to HTTP statuses)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


class BBSError(Exception):
    type = "UnknownError"
    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def as_dict(self) -> dict[str, dict[str, str]]:
        return {"error": {"type": self.type, "message": self.message}}


class InvalidRequest(BBSError):
    type = "InvalidRequest"
    status = 400


class ServiceUnavailable(BBSError):
    """What the request needs runs elsewhere (the Celery worker) and cannot be reached."""

    type = "ServiceUnavailable"
    status = 503


class ResourceExists(BBSError):
    type = "ResourceExists"
    status = 409

    def __init__(self, message: str = "the requested resource already exists") -> None:
        super().__init__(message)


class ResourceNotFound(BBSError):
    type = "ResourceNotFound"
    status = 404

    def __init__(self, message: str = "the requested resource could not be found") -> None:
        super().__init__(message)


def reject_unknown_members(spec: Mapping[str, Any], allowed: Iterable[str]) -> None:
    """A member the request shape does not have is an InvalidRequest naming it."""
    unknown = sorted(set(spec) - set(allowed))
    if unknown:
        raise InvalidRequest(", ".join(f"Invalid field: {name}" for name in unknown))
