"""``make lint`` in the suite: ruff over the tree and mypy over the pure core, so a type
error in a rule fails CI (docs/architecture.md "The core")."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _packages() -> list[str]:
    text = (REPO / "Makefile").read_text()
    match = re.search(r"^MYPY_PACKAGES := (.+)$", text, re.M)
    assert match, "the Makefile names the packages mypy checks"
    return match.group(1).split()


def test_ruff_is_clean() -> None:
    run = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=REPO,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_mypy_is_clean_on_the_core() -> None:
    packages = _packages()
    assert {"auction/engine", "auction/bbs", "auction/sim"} <= set(packages)
    run = subprocess.run([sys.executable, "-m", "mypy", *packages], cwd=REPO,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
