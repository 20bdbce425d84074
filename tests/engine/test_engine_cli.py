"""``python -m auction.engine`` and case validation (conformance.md 1, auction.md 10)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from auction.engine import CaseError, parse_case

REPO = Path(__file__).resolve().parents[2]
GOOD = {"cells": [{"cell_id": "A", "zone": "z1",
                   "total": {"memory_mb": 100, "disk_mb": 100, "containers": 2}}],
        "lrps": [{"process_guid": "w", "index": 0, "memory_mb": 10, "disk_mb": 10}],
        "tasks": [{"task_guid": "t", "memory_mb": 10, "disk_mb": 10}],
        "expect": {"anything": "ignored"}}


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "auction.engine", *args], cwd=REPO, check=False,
                          capture_output=True, text=True)


def test_cli_file_prints_one_outcome_conformance_md_1(tmp_path):
    """conformance.md 1: a file prints order, placements, failures, scores; exit 0."""
    path = tmp_path / "good.json"
    path.write_text(json.dumps(GOOD))
    done = _cli(str(path))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["order"] == ["w.0", "t"]
    assert out["placements"] == {"w.0": "A", "t": "A"} and out["failures"] == {}
    assert set(out["scores"]) == {"w.0", "t"}


def test_cli_folder_prints_one_line_per_case_conformance_md(tmp_path):
    """conformance.md: a folder prints {"case", "result"} per *.json file, by name."""
    for name in ("b.json", "a.json"):
        (tmp_path / name).write_text(json.dumps(GOOD))
    (tmp_path / "notes.txt").write_text("not a case")
    done = _cli(str(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(x) for x in done.stdout.splitlines()]
    assert [x["case"] for x in lines] == ["a.json", "b.json"]
    assert lines[0]["result"]["placements"] == {"w.0": "A", "t": "A"}


BAD = [
    ({"cells": [{"cell_id": "A", "zone": "z", "total": {"memory_mb": 0, "disk_mb": 1,
                                                         "containers": 1}}]},
     "cells[0].total.memory_mb"),
    ({"cells": [{"cell_id": "A", "zone": "z"}]}, "cells[0].total"),
    ({"cells": [], "lrps": [{"process_guid": "w", "index": "0", "memory_mb": 1,
                             "disk_mb": 1}]}, "lrps[0].index"),
    ({"cells": [], "tasks": [{"task_guid": "t", "memory_mb": 1, "disk_mb": 1,
                              "colour": "red"}]}, "tasks[0].colour"),
    ({"cells": [], "config": {"locality_offset": 1.5}}, "config.locality_offset"),
    ({"cells": [], "config": {"starting_container_weight": True}},
     "config.starting_container_weight"),
    ({"cells": [], "lrps": [{"process_guid": "w", "index": 0, "memory_mb": -1,
                             "disk_mb": 1}]}, "lrps[0].memory_mb"),
    ({"cells": [], "lrps": [{"process_guid": "w", "index": 0, "memory_mb": 1, "disk_mb": 1}],
      "tasks": [{"task_guid": "w.0", "memory_mb": 1, "disk_mb": 1}]}, "lrps[0]"),
    ({"lrps": []}, "cells"),
    ({"cells": [], "surprise": 1}, "surprise"),
    ({"cells": [GOOD["cells"][0], GOOD["cells"][0]]}, "cells[1].cell_id"),
    ({"cells": [{**GOOD["cells"][0], "lrps": ["ok", 3]}]}, "cells[0].lrps[1]"),
]


@pytest.mark.parametrize("doc,field", BAD, ids=[f for _, f in BAD])
def test_malformed_case_names_the_field_conformance_md(doc, field):
    """conformance.md: unknown field, wrong type, missing required field -> a CaseError."""
    with pytest.raises(CaseError) as info:
        parse_case(doc)
    assert str(info.value).startswith(field + ":") or str(info.value).startswith(field + ".")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("content,needle", [
    (json.dumps({"cells": [{"cell_id": "A", "zone": "z", "total": {"memory_mb": 1,
                 "disk_mb": 1, "containers": "1"}}]}), "cells[0].total.containers"),
    ("{not json", "not valid JSON"),
    (json.dumps([1, 2]), "expected an object"),
])
def test_cli_malformed_case_exits_2_with_one_line_conformance_md(tmp_path, content, needle):
    """conformance.md: exit 2 and a one-line message naming the field; no traceback."""
    path = tmp_path / "bad.json"
    path.write_text(content)
    for target in (path, tmp_path):
        done = _cli(str(target))
        assert done.returncode == 2
        assert done.stdout == ""
        message = done.stderr.strip()
        assert "\n" not in message and "Traceback" not in message
        assert needle in message and "bad.json" in message


def test_cli_usage_errors_exit_2_conformance_md(tmp_path):
    """conformance.md: a missing path or no argument is an error (exit 2), not a crash."""
    assert _cli(str(tmp_path / "nope.json")).returncode == 2
    assert _cli().returncode == 2
