"""The case runners refuse absurd sizes with one line (conformance.md 3, bbs.md 1.6)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from auction.bbs.validation import INT32_MAX, MAX_INSTANCES
from auction.engine import cases as engine_cases

ROOT = Path(__file__).resolve().parents[2]
AUCTION_CASES = ROOT / "tests/conformance/cases/auction"


def run(module: str, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", module, str(path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)


def test_the_engine_bound_is_the_registry_s() -> None:
    assert engine_cases.INT32_MAX == INT32_MAX


def test_bbs_case_with_2_to_the_31_instances_is_refused(tmp_path: Path) -> None:
    case = tmp_path / "huge.json"
    for instances, message in ((2**31, f"expected at most {MAX_INSTANCES} instances"),
                               (MAX_INSTANCES + 1, f"expected at most {MAX_INSTANCES} instances")):
        case.write_text(json.dumps({"now": 0, "cells": [], "desired": [
            {"process_guid": "x", "domain": "d", "instances": instances}]}))
        done = run("auction.bbs", case)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr


def test_auction_case_with_an_int_past_int32_is_refused(tmp_path: Path) -> None:
    original = json.loads(next(iter(sorted(AUCTION_CASES.glob("*.json")))).read_text())
    original["cells"][0]["total"]["memory_mb"] = 2**40
    case = tmp_path / "huge.json"
    case.write_text(json.dumps(original))
    done = run("auction.engine", case)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"huge.json: cells[0].total.memory_mb: expected an integer <= {INT32_MAX}, got {2**40}\n"
