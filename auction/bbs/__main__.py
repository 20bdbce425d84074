"""``python -m auction.bbs CASE.json|FOLDER [--check]`` (conformance.md 2, bbs.md 11).

A file prints its result as one JSON object; a folder prints one line
``{"case": "<file name>", "result": {...}}`` per ``*.json`` file in name order.
Exit 0 when every case ran; 2 with one line on stderr when an argument or a file is
not a valid case (every file of a folder is checked before any runs).

``--check`` compares each result with the case's ``expect`` instead and prints
``N passed, M failed`` with the first differences; exit 1 when a case failed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from auction.bbs.cases import CaseError, load_case, run_case
from auction.bbs.types import Snapshot
from auction.engine.check import convergence_differences, run_cases

USAGE = "usage: python -m auction.bbs CASE.json|FOLDER [--check]"


def _fail(message: str, status: int = 2) -> int:
    # One line, whatever the message holds: the callers parse stderr line by line.
    print(" ".join(message.split()), file=sys.stderr)
    return status


def _load(path: Path) -> Snapshot:
    try:
        return load_case(path)
    except CaseError as error:
        raise CaseError(error.field, f"invalid case {path.name}: {error}") from None
    except OSError as error:
        raise CaseError("", f"cannot read {path.name}: {error.strerror}") from None


def _expect(path: Path) -> object:
    """The case's ``expect`` object (``load_case`` keeps only what a pass needs)."""
    return json.loads(path.read_text(encoding="utf-8")).get("expect")


def main(argv: list[str] | None = None) -> int:
    try:
        return run_cases(sys.argv[1:] if argv is None else argv, usage=USAGE, load=_load,
                         run=run_case, expect=lambda path, _: _expect(path),
                         differences=convergence_differences, refused=(CaseError,),
                         message=lambda error: error.problem)  # type: ignore[attr-defined]
    except Exception as error:  # noqa: BLE001 - never a traceback (conformance.md)
        return _fail(f"internal error: {type(error).__name__}: {error}", 1)


if __name__ == "__main__":
    sys.exit(main())
