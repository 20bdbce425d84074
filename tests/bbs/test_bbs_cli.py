"""``python -m auction.bbs CASE.json|FOLDER`` (conformance.md 2, bbs.md 11)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from auction.bbs.__main__ import main
from tests.bbs.bbs_builders import case, desired, lrp

REPO = Path(__file__).resolve().parents[2]
LRP_KEYS = [
    "start",
    "create",
    "retire",
    "suspect",
    "unclaim",
    "promote",
    "remove_suspect",
    "remove_evacuating",
]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "auction.bbs", *args],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return path


def test_a_file_prints_one_result_with_every_key(tmp_path: Path) -> None:
    """conformance.md 2: every output key, each a sorted list (or an object for fail)."""
    path = _write(
        tmp_path / "one.json", case(desired=[desired(instances=2)], actual=[lrp(index=1)])
    )
    done = _cli(str(path))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert list(out["lrp"]) == LRP_KEYS
    assert list(out["tasks"]) == ["start", "fail", "complete", "delete"]
    assert out["lrp"]["create"] == ["web.0"]
    assert {"LRPsMissing", "LRPsExtra", "SuspectCells", "PresentCells"} <= set(out["metrics"])


def test_a_folder_prints_one_line_per_case_in_name_order(tmp_path: Path) -> None:
    """conformance.md 2: one ``{"case", "result"}`` object per line; other files ignored."""
    _write(tmp_path / "b.json", case(desired=[desired(instances=1)]))
    _write(tmp_path / "a.json", case())
    _write(tmp_path / "notes.txt", "not a case")
    done = _cli(str(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["case"] for line in lines] == ["a.json", "b.json"]
    assert lines[1]["result"]["lrp"]["start"] == ["web.0"]


def test_a_malformed_case_exits_2_with_one_line_naming_the_field(tmp_path: Path) -> None:
    """conformance.md 2: exit 2, one line on stderr, never a traceback."""
    path = _write(tmp_path / "bad.json", case(actual=[lrp(index=0, since="yesterday")]))
    done = _cli(str(path))
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert "actual[0].since" in done.stderr and "bad.json" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_folder_with_one_bad_case_exits_2_before_printing(tmp_path: Path) -> None:
    """conformance.md 2: a bad case is an error for the whole run."""
    _write(tmp_path / "a.json", case())
    _write(tmp_path / "z.json", case(colour="red"))
    done = _cli(str(tmp_path))
    assert done.returncode == 2 and done.stdout == ""
    assert "z.json" in done.stderr and "colour" in done.stderr


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        (case(colour="red"), "colour"),
        ({"cells": []}, "now"),
        ({"now": 1}, "cells"),
        (case(now="soon"), "now"),
        (case(cells="cell-1"), "cells"),
        (case(cells=[1]), "cells[0]"),
        (case(domains={"cf-apps": "later"}), "domains.cf-apps"),
        (case(config={"stale_unclaimed_s": 30, "typo_s": 1}), "config.typo_s"),
        (case(desired=[{"process_guid": "w", "domain": "d"}]), "desired[0].instances"),
        (case(desired=[desired(instances=-1)]), "desired[0].instances"),
        (case(desired=[desired(), desired()]), "desired[1].process_guid"),
        (case(actual=[lrp(index="0")]), "actual[0].index"),
        (case(actual=[lrp(index=True)]), "actual[0].index"),
        (case(actual=[lrp(state="BOOTING")]), "actual[0].state"),
        (case(actual=[lrp(presence="GHOST")]), "actual[0].presence"),
        (case(actual=[lrp(shiny=True)]), "actual[0].shiny"),
        (case(actual=[{"process_guid": "w", "index": 0, "since": 1}]), "actual[0].state"),
        (case(actual=[lrp(index=0), lrp(index=0, state="CRASHED")]), "actual[1]"),
        (case(tasks=[{"task_guid": "t", "state": "PENDING"}]), "tasks[0].created_at"),
        (
            case(tasks=[{"task_guid": "t", "state": "PENDING", "created_at": 1, "failed": "no"}]),
            "tasks[0].failed",
        ),
        ("[]", "case"),
        ("{not json", "not valid JSON"),
    ],
)
def test_invalid_cases_name_their_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: Any, field: str
) -> None:
    """conformance.md 2 / bbs.md 11: unknown field, wrong type, missing required field,
    duplicate (process_guid, index, presence): exit 2 and one line naming the field."""
    path = _write(tmp_path / "case.json", doc)
    assert main([str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and field in lines[0], lines


def test_the_duplicate_message_names_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bbs.md 11: at most one actual row per (process_guid, index, presence)."""
    path = _write(tmp_path / "dup.json", case(actual=[lrp(index=0), lrp(index=0)]))
    assert main([str(path)]) == 2
    assert "duplicate (process_guid, index, presence)" in capsys.readouterr().err


def test_defaults_fill_optional_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """conformance.md 2: presence ORDINARY, crash_count 0, config and lists defaulted;
    an actual row's domain defaults to its desired LRP's."""
    doc = {
        "now": 1000,
        "cells": ["c"],
        "domains": {"d": None},
        "desired": [{"process_guid": "w", "domain": "d", "instances": 0}],
        "actual": [{"process_guid": "w", "index": 0, "state": "CRASHED", "since": 0}],
    }
    assert main([str(_write(tmp_path / "ok.json", doc))]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["lrp"]["retire"] == ["w.0"]  # desired domain d is fresh: extra retired


def test_a_missing_path_and_bad_usage_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """conformance.md 2: an error is one line and status 2, not a traceback."""
    assert main(["/nonexistent/case.json"]) == 2
    assert main([]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 2
