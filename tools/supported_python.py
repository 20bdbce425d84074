"""Which Pythons diego-web supports: pyproject.toml's ``requires-python``, read in one place.

    python3.X tools/supported_python.py          # exit 0 when this Python is supported
    python3 tools/supported_python.py --minors   # the supported 3.X, newest first

The Makefile runs the first with each candidate interpreter to pick the newest supported
one; ``.ci/run`` uses the second to look for the others. A Python older than 3.11 has no
``tomllib`` and exits non-zero too: it is not supported either.
"""

from __future__ import annotations

import operator
import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
_COMPARE = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt,
            "==": operator.eq, "!=": operator.ne}


def allowed(version: tuple[int, int]) -> bool:
    spec = tomllib.loads(PYPROJECT.read_text())["project"]["requires-python"]
    for clause in spec.split(","):
        match = re.fullmatch(r"\s*(>=|<=|==|!=|>|<)\s*(\d+)\.(\d+)\s*", clause)
        if match is None:
            raise SystemExit(f"requires-python: cannot read {clause!r}")
        bound = (int(match[2]), int(match[3]))
        if not _COMPARE[match[1]](version, bound):
            return False
    return True


if __name__ == "__main__":
    if sys.argv[1:] == ["--minors"]:
        print(" ".join(f"3.{m}" for m in range(30, -1, -1) if allowed((3, m))))
    else:
        sys.exit(0 if allowed(sys.version_info[:2]) else 1)
