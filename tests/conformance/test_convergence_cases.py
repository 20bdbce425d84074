"""Every public convergence case against its ``expect`` (conformance.md 2, bbs.md 11).

Only the keys ``expect`` names are compared, each named list or ``fail`` map whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from auction.bbs.cases import load_case, run_case

CASES = Path(__file__).resolve().parents[2].parent / "shared" / "conformance" / "convergence"


def _case_files() -> list[Path]:
    # Fail loudly: an empty parametrisation would pass silently (conformance.md 2).
    if not CASES.is_dir():
        raise RuntimeError(f"convergence cases not found at {CASES}")
    files = sorted(CASES.glob("*.json"))
    if not files:
        raise RuntimeError(f"no convergence cases in {CASES}")
    return files


def test_the_public_cases_exist() -> None:
    """conformance.md 2: the suite must run every public case."""
    assert len(_case_files()) >= 7


@pytest.mark.parametrize("path", _case_files(), ids=lambda p: p.name)
def test_convergence_case(path: Path) -> None:
    """bbs.md 11: compare only the keys ``expect`` names, each value whole."""
    expect: dict[str, dict[str, Any]] = json.loads(path.read_text())["expect"]
    result = run_case(load_case(path))
    for section, wanted in expect.items():
        assert section in result, f"unknown expect section {section!r}"
        for key, value in wanted.items():
            assert key in result[section], f"{section}.{key} not produced"
            assert result[section][key] == value, f"{section}.{key}"
