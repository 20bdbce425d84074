"""``python -m auction.bbs CASE.json|FOLDER`` (conformance.md 2, bbs.md 11).

A file prints its result as one JSON object; a folder prints one line
``{"case": "<file name>", "result": {...}}`` per ``*.json`` file in name order.
Exit 0 when every case ran; 2 with one line on stderr when an argument or a file is
not a valid case (every file of a folder is checked before any runs).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from auction.bbs.cases import CaseError, load_case, run_case
from auction.bbs.types import Snapshot

USAGE = "usage: python -m auction.bbs CASE.json|FOLDER"


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


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        return _fail(USAGE)
    target = Path(args[0])
    try:
        if target.is_dir():
            files = sorted(p for p in target.iterdir() if p.suffix == ".json" and p.is_file())
            cases = [(p.name, _load(p)) for p in files]
            for name, snapshot in cases:
                print(json.dumps({"case": name, "result": run_case(snapshot)}))
        elif target.is_file():
            print(json.dumps(run_case(_load(target))))
        else:
            return _fail(f"no such case file or folder: {target}")
    except CaseError as error:
        return _fail(error.problem)
    except Exception as error:  # noqa: BLE001 - never a traceback (conformance.md)
        return _fail(f"internal error: {type(error).__name__}: {error}", 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
