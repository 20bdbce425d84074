"""Every auction case against its ``expect`` (docs/behaviour/conformance.md 1;
docs/behaviour/auction.md 10).

``order`` compared as a list, ``placements`` and ``failures`` as whole maps, ``scores``
only for the identifiers ``expect`` names, with a relative tolerance of 1e-9. The cases
live in ``tests/conformance/cases/`` (a copy of the user's public cases, checked equal
to them by ``test_case_copies.py`` when those are beside the repository) and, for the
project's own public cases in the same format, in ``tests/conformance/project/``.
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
CASES = REPO / "tests" / "conformance" / "cases" / "auction"
FILES = sorted(CASES.glob("*.json"))
PROJECT = REPO / "tests" / "conformance" / "project" / "auction"
PROJECT_FILES = sorted(PROJECT.glob("*.json"))


def compare(result: dict, expect: dict) -> None:
    assert result["order"] == expect["order"]
    assert result["placements"] == expect["placements"]
    assert result["failures"] == expect["failures"]
    for ident, score in expect.get("scores", {}).items():
        assert ident in result["scores"], ident
        assert math.isclose(result["scores"][ident], score, rel_tol=1e-9), ident


def test_case_folder_holds_every_public_case_conformance_md():
    """conformance.md: the suite runs every public case; the ten known ones are here."""
    assert len(FILES) >= 10, f"auction cases missing from {CASES}"
    assert PROJECT_FILES, f"the project's own auction cases missing from {PROJECT}"
    assert not {p.name for p in FILES} & {p.name for p in PROJECT_FILES}, "one name, one case"


@pytest.mark.parametrize("path", FILES + PROJECT_FILES, ids=lambda p: p.name)
def test_public_auction_case_auction_md_10(path: Path):
    """auction.md 10: one case = one auction (schedule + commit), compared with expect."""
    case = load_case(path)
    assert isinstance(case.expect, dict), "a public case carries an expect object"
    compare(run_case(case).to_case_output(), case.expect)


@pytest.mark.parametrize("folder", [CASES, PROJECT], ids=["public", "project"])
def test_cli_folder_runs_every_public_case_conformance_md_1(folder: Path):
    """conformance.md: the folder form prints one {"case", "result"} line per file."""
    files = sorted(folder.glob("*.json"))
    out = subprocess.run([sys.executable, "-m", "auction.engine", str(folder)], cwd=REPO,
                         capture_output=True, text=True, check=True)
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [line["case"] for line in lines] == [p.name for p in files]
    for path, line in zip(files, lines, strict=True):
        compare(line["result"], json.loads(path.read_text())["expect"])


def test_cli_check_says_how_many_pass_conformance_md_1(tmp_path: Path):
    """``--check``: "N passed, M failed", the first differences, exit 1 on a failure."""
    ok = subprocess.run([sys.executable, "-m", "auction.engine", str(CASES), "--check"],
                        cwd=REPO, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.splitlines()[-1] == f"{len(FILES)} passed, 0 failed"
    # A case whose expect is wrong on purpose: one failure, its difference named.
    doc = json.loads((CASES / "08-binpack-tie-dealt-order.json").read_text())
    doc["expect"]["placements"]["t"] = "X"
    (tmp_path / "a-wrong.json").write_text(json.dumps(doc))
    (tmp_path / "b-right.json").write_text((CASES / "07-no-cells.json").read_text())
    bad = subprocess.run([sys.executable, "-m", "auction.engine", str(tmp_path), "--check"],
                         cwd=REPO, capture_output=True, text=True)
    assert bad.returncode == 1
    assert "FAIL a-wrong.json" in bad.stdout
    assert "placements['t']: expected 'X', got 'Y'" in bad.stdout
    assert bad.stdout.splitlines()[-1] == "1 passed, 1 failed"
