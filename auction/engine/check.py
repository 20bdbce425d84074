"""``--check`` for the case runners: each case's result against its ``expect``.

Both ``python -m auction.engine`` and ``python -m auction.bbs`` print
``N passed, M failed`` and the first differences, and exit 1 when a case failed, so a
newcomer can tell at once whether the cases pass (conformance.md). What "equal" means
differs per runner (auction.md 10, conformance.md 2); each passes its own ``differences``.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

#: How many failing cases, and differences per case, are printed in full.
SHOWN_CASES = 10
SHOWN_DIFFERENCES = 5

Differences = Callable[[dict[str, Any], Any], list[str]]


def report(results: Iterable[tuple[str, dict[str, Any], Any]], differences: Differences,
           out: TextIO) -> int:
    """Print the verdict of every ``(name, result, expect)``; 0 when all passed, else 1.

    A case without an ``expect`` object cannot pass: it is counted as failed.
    """
    passed = failed = 0
    shown = 0
    for name, result, expect in results:
        problems = (["no expect object to compare with"] if not isinstance(expect, dict)
                    else differences(result, expect))
        if not problems:
            passed += 1
            continue
        failed += 1
        if shown < SHOWN_CASES:
            shown += 1
            out.write(f"FAIL {name}\n")
            for problem in problems[:SHOWN_DIFFERENCES]:
                out.write(f"  {problem}\n")
            if len(problems) > SHOWN_DIFFERENCES:
                out.write(f"  … and {len(problems) - SHOWN_DIFFERENCES} more differences\n")
    if failed > shown:
        out.write(f"(… {failed - shown} more failing cases not shown)\n")
    out.write(f"{passed} passed, {failed} failed\n")
    return 1 if failed else 0


def map_differences(label: str, got: dict[str, Any], want: dict[str, Any]) -> list[str]:
    """Key-by-key differences of two whole maps, in ``want``'s then ``got``'s order."""
    problems = []
    for key, value in want.items():
        if key not in got:
            problems.append(f"{label}[{key!r}]: expected {value!r}, missing")
        elif got[key] != value:
            problems.append(f"{label}[{key!r}]: expected {value!r}, got {got[key]!r}")
    problems.extend(f"{label}[{key!r}]: not expected, got {got[key]!r}"
                    for key in got if key not in want)
    return problems


def auction_differences(result: dict[str, Any], expect: Any) -> list[str]:
    """auction.md 10: ``order`` as a list, ``placements`` and ``failures`` as whole maps,
    ``scores`` only for the identifiers ``expect`` names (relative tolerance 1e-9)."""
    problems: list[str] = []
    if "order" in expect and result["order"] != expect["order"]:
        problems.append(f"order: expected {expect['order']}, got {result['order']}")
    for key in ("placements", "failures"):
        if key in expect:
            problems += map_differences(key, result[key], expect[key])
    for ident, score in expect.get("scores", {}).items():
        got = result["scores"].get(ident)
        if got is None:
            problems.append(f"scores[{ident!r}]: expected {score!r}, missing")
        elif not math.isclose(got, score, rel_tol=1e-9):
            problems.append(f"scores[{ident!r}]: expected {score!r}, got {got!r}")
    return problems


def convergence_differences(result: dict[str, Any], expect: Any) -> list[str]:
    """conformance.md 2: only the keys ``expect`` names, each list or ``fail`` map whole."""
    problems: list[str] = []
    for section, wanted in expect.items():
        got_section = result.get(section)
        if not isinstance(got_section, dict) or not isinstance(wanted, dict):
            problems.append(f"{section}: unknown section")
            continue
        for key, value in wanted.items():
            if key not in got_section:
                problems.append(f"{section}.{key}: not produced")
            elif got_section[key] != value:
                problems.append(f"{section}.{key}: expected {value!r}, got {got_section[key]!r}")
    return problems


def run_cases(argv: list[str], *, usage: str, load: Callable[[Path], Any],
              run: Callable[[Any], dict[str, Any]], expect: Callable[[Path, Any], Any],
              differences: Differences, refused: tuple[type[Exception], ...],
              message: Callable[[Exception], str]) -> int:
    """The command line both case runners share (conformance.md): ``CASE.json|FOLDER
    [--check]``. A file prints its result, a folder one ``{"case", "result"}`` line per
    ``*.json`` in name order; every file is loaded before any runs, and a bad one is
    exit 2 with one line on stderr; ``--check`` prints the verdicts instead (exit 1 on a
    failure)."""
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    if len(args) != 1 or args[0].startswith("-"):
        return _refuse(usage)
    target = Path(args[0])
    if target.is_dir():
        files = sorted(p for p in target.iterdir() if p.suffix == ".json" and p.is_file())
    elif target.is_file():
        files = [target]
    else:
        return _refuse(f"no such case file or folder: {target}")
    try:
        cases = [(p, load(p)) for p in files]
    except refused as exc:
        return _refuse(message(exc))
    if check:
        return report(((p.name, run(case), expect(p, case)) for p, case in cases), differences,
                      sys.stdout)
    for path, case in cases:
        result = run(case)
        line = {"case": path.name, "result": result} if target.is_dir() else result
        sys.stdout.write(json.dumps(line) + "\n")
    return 0


def _refuse(text: str) -> int:
    print(" ".join(text.split()), file=sys.stderr)  # one line: callers read stderr by line
    return 2
