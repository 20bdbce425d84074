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
from auction.engine.check import convergence_differences, report

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
    args = sys.argv[1:] if argv is None else argv
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    if len(args) != 1 or args[0].startswith("-"):
        return _fail(USAGE)
    target = Path(args[0])
    try:
        if target.is_dir():
            files = sorted(p for p in target.iterdir() if p.suffix == ".json" and p.is_file())
        elif target.is_file():
            files = [target]
        else:
            return _fail(f"no such case file or folder: {target}")
        cases = [(p.name, _load(p), p) for p in files]
        if check:
            return report(((name, run_case(snapshot), _expect(path))
                           for name, snapshot, path in cases),
                          convergence_differences, sys.stdout)
        for name, snapshot, _ in cases:
            result = run_case(snapshot)
            print(json.dumps({"case": name, "result": result} if target.is_dir() else result))
    except CaseError as error:
        return _fail(error.problem)
    except Exception as error:  # noqa: BLE001 - never a traceback (conformance.md)
        return _fail(f"internal error: {type(error).__name__}: {error}", 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
