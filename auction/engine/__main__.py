"""``python -m auction.engine CASE.json|FOLDER`` (conformance.md, section 1).

A file prints one outcome object; a folder prints one ``{"case", "result"}`` line per
``*.json`` file, in name order. Exit 0 when every case ran, 2 with a one-line message on
stderr when an argument or a file is not a valid case (every file is validated before
any runs, so a folder either runs whole or not at all).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .cases import CaseError, case_output, load_case

USAGE = "usage: python -m auction.engine CASE.json|FOLDER"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(USAGE, file=sys.stderr)
        return 2
    target = Path(argv[0])
    try:
        if target.is_dir():
            files = sorted(p for p in target.iterdir() if p.suffix == ".json" and p.is_file())
            cases = [(p.name, load_case(p)) for p in files]
            for name, case in cases:
                line = {"case": name, "result": case_output(case)}
                sys.stdout.write(json.dumps(line) + "\n")
        elif target.is_file():
            sys.stdout.write(json.dumps(case_output(load_case(target))) + "\n")
        else:
            print(f"{target}: no such file or folder", file=sys.stderr)
            return 2
    except CaseError as exc:
        print(" ".join(str(exc).split()), file=sys.stderr)  # always one line
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
