"""Every convergence case against its ``expect`` (docs/behaviour/conformance.md 2;
docs/behaviour/bbs.md 11).

Only the keys ``expect`` names are compared, each named list or ``fail`` map whole.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from auction.bbs.cases import load_case, run_case

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "tests" / "conformance" / "cases" / "convergence"
FILES = sorted(CASES.glob("*.json"))


def test_the_public_cases_exist() -> None:
    """conformance.md 2: the suite runs every public case; the seven known ones are here."""
    assert len(FILES) >= 7


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_convergence_case(path: Path) -> None:
    """bbs.md 11: compare only the keys ``expect`` names, each value whole."""
    expect: dict[str, dict[str, Any]] = json.loads(path.read_text())["expect"]
    result = run_case(load_case(path))
    for section, wanted in expect.items():
        assert section in result, f"unknown expect section {section!r}"
        for key, value in wanted.items():
            assert key in result[section], f"{section}.{key} not produced"
            assert result[section][key] == value, f"{section}.{key}"


def test_cli_check_says_how_many_pass_conformance_md_2(tmp_path: Path) -> None:
    """``python -m auction.bbs DIR --check``: "N passed, M failed", exit 1 on a failure."""
    ok = subprocess.run([sys.executable, "-m", "auction.bbs", str(CASES), "--check"],
                        cwd=REPO, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.splitlines()[-1] == f"{len(FILES)} passed, 0 failed"
    doc = json.loads(FILES[0].read_text())
    doc["expect"]["lrp"]["start"] = ["nope.0"]
    (tmp_path / "wrong.json").write_text(json.dumps(doc))
    bad = subprocess.run([sys.executable, "-m", "auction.bbs", str(tmp_path), "--check"],
                         cwd=REPO, capture_output=True, text=True)
    assert bad.returncode == 1
    assert "FAIL wrong.json" in bad.stdout and "lrp.start: expected ['nope.0']" in bad.stdout
    assert bad.stdout.splitlines()[-1] == "0 passed, 1 failed"
