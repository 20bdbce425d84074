"""``python -m auction.engine CASE.json|FOLDER [--check]`` (conformance.md, section 1).

A file prints one outcome object; a folder prints one ``{"case", "result"}`` line per
``*.json`` file, in name order. Exit 0 when every case ran, 2 with a one-line message on
stderr when an argument or a file is not a valid case (every file is validated before
any runs, so a folder either runs whole or not at all).

``--check`` compares each result with the case's ``expect`` instead (auction.md 10) and
prints ``N passed, M failed`` with the first differences; exit 1 when a case failed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .cases import CaseError, case_output, load_case
from .check import auction_differences, report

USAGE = "usage: python -m auction.engine CASE.json|FOLDER [--check]"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    if len(args) != 1 or args[0].startswith("-"):
        print(USAGE, file=sys.stderr)
        return 2
    target = Path(args[0])
    try:
        if target.is_dir():
            files = sorted(p for p in target.iterdir() if p.suffix == ".json" and p.is_file())
        elif target.is_file():
            files = [target]
        else:
            print(f"{target}: no such file or folder", file=sys.stderr)
            return 2
        cases = [(p.name, load_case(p)) for p in files]
        if check:
            return report(((name, case_output(case), case.expect) for name, case in cases),
                          auction_differences, sys.stdout)
        for name, case in cases:
            result = case_output(case)
            line = {"case": name, "result": result} if target.is_dir() else result
            sys.stdout.write(json.dumps(line) + "\n")
    except CaseError as exc:
        print(" ".join(str(exc).split()), file=sys.stderr)  # always one line
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
