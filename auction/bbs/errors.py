"""BBS errors as data: the ``{"type", "message"}`` pair the API answers with.

The core returns these instead of raising, so the shell can turn them into HTTP
answers and a simulator can count them (``bbs: models/errors.go``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True, frozen=True)
class BBSError:
    type: str
    message: str

    def as_json(self) -> dict[str, dict[str, str]]:
        """The body the BBS answers with (bbs.md 1.2 shows the shape)."""
        return {"error": {"type": self.type, "message": self.message}}
