"""Corrupt scenario files are one line, never a traceback, and change nothing (dashboard.md C9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from auction.models import Cell, DesiredLRP
from auction.scenarios import ScenarioError, load
from auction.services.scenarios import scenario_load

SEED = json.loads((Path(__file__).resolve().parents[2] / "auction/scenarios/seed-example.json").read_text())


def write(tmp_path: Path, name: str, content: bytes | str | dict) -> str:
    path = tmp_path / f"{name}.json"
    if isinstance(content, dict):
        content = json.dumps(content)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(path)


def corrupt_files(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """name -> (path, the start of the expected message after "scenario <path>")."""
    garbage = bytes(range(128, 256)) * 3
    return {
        "truncated": (write(tmp_path, "truncated", json.dumps(SEED)[:200]), ": not valid JSON: "),
        "garbage": (write(tmp_path, "garbage", garbage), ": not UTF-8 text (byte 0)"),
        "nan": (write(tmp_path, "nan", '{"name": NaN}'), ": not valid JSON: NaN is not a JSON number"),
        "deep": (write(tmp_path, "deep", "[" * 100_000), ": not valid JSON: "),
        "list": (write(tmp_path, "list", "[1, 2]"), ": expected an object"),
        "cells-type": (write(tmp_path, "cells-type", {**SEED, "cells": "x"}), ".cells: wrong type"),
        "memory-type": (write(tmp_path, "memory-type", {**SEED, "cells": [
            {**SEED["cells"][0], "memory_mb": "lots"}]}), ".cells[0].memory_mb: wrong type"),
        "missing": (str(tmp_path / "absent.json"), ": cannot read the file: No such file or directory"),
    }


def test_each_corruption_is_one_scenario_error_line(tmp_path: Path) -> None:
    for name, (path, expected) in corrupt_files(tmp_path).items():
        with pytest.raises(ScenarioError) as caught:
            load(path)
        message = str(caught.value)
        assert message.startswith(f"scenario {path}{expected}"), (name, message)
        assert "\n" not in message, name


@pytest.mark.django_db
@pytest.mark.parametrize("command", ["load_scenario", "simulate", "compare"])
def test_the_commands_answer_one_line_and_keep_the_cluster(tmp_path: Path, command: str) -> None:
    scenario_load("seed-example")
    before = (Cell.objects.count(), DesiredLRP.objects.count())
    files = corrupt_files(tmp_path)
    files["instances"] = (write(tmp_path, "instances", {**SEED, "desired_lrps": [
        {"process_guid": "huge", "domain": "cf-apps", "instances": 2**31}]}), "")
    files["wrong-value-type"] = (write(tmp_path, "wrong-value-type", {**SEED, "desired_lrps": [
        {"process_guid": "huge", "domain": "cf-apps", "instances": "x"}]}), "")
    for name, (path, _) in files.items():
        with pytest.raises(CommandError) as caught:
            call_command(command, path)
        assert "\n" not in str(caught.value), (command, name, str(caught.value))
        assert "scenario" in str(caught.value), (command, name, str(caught.value))
    assert (Cell.objects.count(), DesiredLRP.objects.count()) == before


@pytest.mark.django_db
def test_a_good_file_by_path_loads(tmp_path: Path) -> None:
    call_command("load_scenario", write(tmp_path, "mine", {**SEED, "name": "mine"}))
    assert Cell.objects.count() == len(SEED["cells"])
