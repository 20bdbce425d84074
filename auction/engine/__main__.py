"""``python -m auction.engine CASE.json|FOLDER [--check]`` (conformance.md, section 1).

A file prints one outcome object; a folder prints one ``{"case", "result"}`` line per
``*.json`` file, in name order. Exit 0 when every case ran, 2 with a one-line message on
stderr when an argument or a file is not a valid case (every file is validated before
any runs, so a folder either runs whole or not at all).

``--check`` compares each result with the case's ``expect`` instead (auction.md 10) and
prints ``N passed, M failed`` with the first differences; exit 1 when a case failed.
"""

from __future__ import annotations

import sys

from .cases import CaseError, case_output, load_case
from .check import auction_differences, run_cases

USAGE = "usage: python -m auction.engine CASE.json|FOLDER [--check]"


def main(argv: list[str]) -> int:
    return run_cases(argv, usage=USAGE, load=load_case, run=case_output,
                     expect=lambda _, case: case.expect, differences=auction_differences,
                     refused=(CaseError,), message=str)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
