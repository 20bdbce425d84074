"""The check mode's one setting and its one error (``DIEGO_CHECK_DERIVED``).

With the setting at ``1`` every store proves what it keeps between writes against what
the truth gives, and the first difference raises ``DerivedMismatch``: the memory store
all its indexes and kept answers (``auction.sim.memory.check``), the database store the
primary keys it keeps between reads (``DbStore``). The tests run with it on.
"""

from __future__ import annotations

import os

#: The setting that turns the check mode on (``1``); read by ``checking`` alone.
CHECK_SETTING = "DIEGO_CHECK_DERIVED"


def checking() -> bool:
    """Whether every kept answer is checked against a fresh one (``CHECK_SETTING``)."""
    return os.environ.get(CHECK_SETTING) == "1"


class DerivedMismatch(AssertionError):
    """A kept index or answer differs from the one the truth gives."""

    def __init__(self, index: str, key: object, expected: object, found: object) -> None:
        self.index, self.key, self.expected, self.found = index, key, expected, found
        super().__init__(f"{index}[{key!r}]: the truth gives {_short(expected)}, kept {_short(found)}")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 600 else text[:600] + "..."
