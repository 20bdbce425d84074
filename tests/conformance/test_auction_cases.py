"""Every public auction case against its ``expect`` (conformance.md 1, auction.md 10).

``order`` compared as a list, ``placements`` and ``failures`` as whole maps, ``scores``
only for the identifiers ``expect`` names, with a relative tolerance of 1e-9.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from auction.engine import load_case, run_case

REPO = Path(__file__).resolve().parents[2]
CASES = REPO.parent / "shared" / "conformance" / "auction"
# Never skip: a missing folder yields one parameter that fails loudly below.
FILES = sorted(CASES.glob("*.json")) if CASES.is_dir() else [CASES / "MISSING"]


def compare(result: dict, expect: dict) -> None:
    assert result["order"] == expect["order"]
    assert result["placements"] == expect["placements"]
    assert result["failures"] == expect["failures"]
    for ident, score in expect.get("scores", {}).items():
        assert ident in result["scores"], ident
        assert math.isclose(result["scores"][ident], score, rel_tol=1e-9), ident


def test_public_case_folder_exists_conformance_md():
    """conformance.md: the suite must run every public case, so the folder must be there."""
    assert CASES.is_dir(), f"public auction cases not found at {CASES}"
    assert any(CASES.glob("*.json"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_public_auction_case_auction_md_10(path: Path):
    """auction.md 10: one case = one auction (schedule + commit), compared with expect."""
    assert path.is_file(), f"public auction case folder missing: {CASES}"
    case = load_case(path)
    assert isinstance(case.expect, dict), "a public case carries an expect object"
    compare(run_case(case).to_case_output(), case.expect)


def test_cli_folder_runs_every_public_case_conformance_md_1():
    """conformance.md: the folder form prints one {"case", "result"} line per file."""
    out = subprocess.run([sys.executable, "-m", "auction.engine", str(CASES)], cwd=REPO,
                         capture_output=True, text=True, check=True)
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [line["case"] for line in lines] == [p.name for p in FILES]
    for path, line in zip(FILES, lines, strict=True):
        compare(line["result"], json.loads(path.read_text())["expect"])
