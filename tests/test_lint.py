"""``make lint`` in the suite: ruff over the tree and mypy over the pure core, so a type
error in a rule fails CI (docs/architecture.md "The core")."""

from __future__ import annotations

import ast
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


def test_the_app_never_imports_the_benchmarks() -> None:
    """The app's benchmarks live in ``bench/``, outside it: nothing the app ships imports them."""
    offenders = []
    for package in ("auction", "diego_web"):
        for path in sorted((REPO / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                         else [])
                offenders += [f"{path.relative_to(REPO)}: {name}" for name in names
                              if name == "bench" or name.startswith("bench.")]
    assert not offenders, offenders
