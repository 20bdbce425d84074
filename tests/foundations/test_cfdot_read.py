"""The cfdot reader (plans.md 3.1, 3.2): hand-written captures from the cfdot reference's
field tables, old and new versions, every kind of empty, and the exact errors."""

from __future__ import annotations

import gzip
import io
import json
import random
from pathlib import Path

import pytest

from auction.bbs import types as core
from auction.sim.cfdot import dump_lines
from auction.sim.cfdot_read import CaptureError, kind_of, read_capture, summary
from auction.sim.model import DRAINING, FAILED

CAPTURES = Path(__file__).parent / "captures"
WEB = "d3f1a2b4-7c6e-4e8f-9a0b-1c2d3e4f5a6b-8e7d6c5b-4a3f-4e2d-9c1b-0a9f8e7d6c5b"
WORKER = "aa11bb22-cc33-4d44-8e55-ff6677889900-11223344-5566-4778-899a-abbccddeeff0"
CELL_Z2 = "5c2b9f4e-8a71-4d3e-9b06-1f7e2a4c8d90"
CELL_Z1 = "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a"


def files() -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in sorted(CAPTURES.glob("*.jsonl"))]


def error(*captured: tuple[str, str]) -> str:
    with pytest.raises(CaptureError) as info:
        read_capture((name, text.encode()) for name, text in captured)
    return info.value.message


def test_every_command_of_the_reference_is_read_plans_md_3_1() -> None:
    view = read_capture(files())
    assert summary(view) == {"cells": 3, "zones": 3, "desired_lrps": 2, "actual_lrps": 7,
                             "instances_desired": 3, "tasks": 4, "domains": 2}
    cells = {c.cell_id: c for c in view.cells}
    z2 = cells[CELL_Z2]
    # Versioned stacks lose their suffix; "extra" and docker stay schemes; tags kept.
    assert z2.preloaded_rootfses == ("cflinuxfs4",)
    assert z2.rootfs_providers == ("extra", "docker")
    assert z2.placement_tags == ("iso-seg-blue",)
    assert (z2.index, z2.memory_mb, z2.containers, z2.proxy_memory_mb) == (4, 31998, 249, 32)
    assert cells[CELL_Z1].state == DRAINING  # Evacuating only shows in cell-states
    assert cells["old-rep-cell"].state == FAILED and cells["old-rep-cell"].zone == "default"
    apps = {a.process_guid: a for a in view.apps}
    assert apps[WEB].ports == (8080, 2222) and apps[WEB].volume_drivers == ("nfsv3driver",)
    assert (apps[WEB].epoch, apps[WEB].tag) == ("e1d2c3b4-a5f6-4e7d-8c9b-0a1f2e3d4c5b", 4)
    rows = {r.key: r for r in view.rows}
    # EVACUATING and its ORDINARY replacement are two rows (plans.md 3.1).
    assert rows[(WORKER, 0, core.EVACUATING)].cell_id == CELL_Z1
    assert rows[(WORKER, 0, core.ORDINARY)].state == core.CLAIMED
    # A SUSPECT row on a cell absent from `cells`, past instances (index 3 of 1): kept.
    assert rows[(WORKER, 3, core.SUSPECT)].cell_id == "gone-cell-7"
    # An actual with no desired LRP and a pre-2018 row without presence: ORDINARY.
    assert rows[("orphan-guid", 0, core.ORDINARY)].state == core.RUNNING
    assert rows[(WEB, 1, core.ORDINARY)].placement_error == "insufficient resources: memory"
    assert rows[(WEB, 2, core.ORDINARY)].crash_count == 4 and rows[(WEB, 2, core.ORDINARY)].cell_id == ""
    tasks = {t.task_guid: t for t in view.tasks}
    assert tasks["pending-1"].task.state == core.PENDING  # a numeric enum (1)
    assert tasks["resolving-1"].task.failed and tasks["resolving-1"].task.cell_id == ""
    assert tasks["0f1e2d3c-4b5a-4968-8776-5a4b3c2d1e0f"].task.cell_id == CELL_Z2
    assert view.domains == {"cf-apps": None, "cf-tasks": None}


def test_nanosecond_timestamps_come_back_exactly_plans_md_3_1() -> None:
    view = read_capture(files())
    out = [json.loads(line) for line in dump_lines(view, events=False)]
    since = {(d["process_guid"], d["index"], d["presence"]): d["since"] for d in out if "since" in d}
    assert since[(WEB, 0, "ORDINARY")] == 1718003456789012345
    assert since[(WORKER, 3, "SUSPECT")] == 1717990000123456789
    task = next(d for d in out if d.get("task_guid") == "0f1e2d3c-4b5a-4968-8776-5a4b3c2d1e0f")
    assert (task["created_at"], task["updated_at"], task["first_completed_at"]) == (
        1718003000123456789, 1718003002987654321, 0)


def test_times_within_97_days_of_the_capture_are_exact_plans_md_3_1() -> None:
    newest = 1718003470_123456789
    old = newest - 97 * 86400 * 10**9 - 987654321  # ns digits everywhere
    rows = [{"process_guid": "pg", "index": i, "domain": "d", "state": "CRASHED", "since": since,
             "modification_tag": {"epoch": "e", "index": 0}} for i, since in enumerate((newest, old))]
    view = read_capture([("a", "\n".join(json.dumps(r) for r in rows).encode())])
    assert view.origin_ns == 1718003470 * 10**9
    assert [json.loads(line)["since"] for line in dump_lines(view, events=False)] == [newest, old]


def test_secrets_are_never_read_plans_md_3_1() -> None:
    text = "\n".join(dump_lines(read_capture(files())))
    for secret in ("SECRET", "hunter2", "PRIVATE KEY", "robot", "VCAP_SERVICES", "DB_PASSWORD"):
        assert secret not in text
    assert "SECRET" in "".join(p.read_text() for p in CAPTURES.glob("*.jsonl"))  # the test can fail


def test_assumptions_are_stated_plans_md_3_2() -> None:
    view = read_capture(files())
    text = " | ".join(view.assumptions)
    assert 'zone "default"' in text and "old-rep-cell" in text and "orphan-guid" in text
    only_cells = read_capture([("c", (CAPTURES / "cells.jsonl").read_bytes()),
                               ("d", (CAPTURES / "desired.jsonl").read_bytes())])
    text = " | ".join(only_cells.assumptions)
    assert "no cell-states: free resources computed from the actual LRPs" in text
    assert "no domains: every domain of a desired LRP or task is fresh" in text
    assert only_cells.domains == {"cf-apps": None}
    assert all(c.state == "healthy" for c in only_cells.cells)


def test_a_real_foundations_callbacks_are_never_kept_plans_md_3_2() -> None:
    """plans.md 3.2 point 6: the capture's task names Cloud Controller's callback URL; the
    imported task has none (a simulated completion must not POST there), and it is said."""
    assert "cloud-controller-ng" in (CAPTURES / "tasks.jsonl").read_text()  # the test can fail
    view = read_capture(files())
    assert view.tasks and all(t.task.callback_url == "" for t in view.tasks)
    assert "cloud-controller-ng" not in "\n".join(dump_lines(view))
    assert any("completion callbacks dropped" in a for a in view.assumptions), view.assumptions


def test_order_names_gzip_and_one_stream_do_not_matter_plans_md_3_1() -> None:
    expected = list(dump_lines(read_capture(files())))
    lines = [line for _, content in files() for line in content.decode().splitlines()]
    random.Random(3).shuffle(lines)
    one = "\n".join(lines).encode()
    assert list(dump_lines(read_capture([("all.txt", one)]))) == expected
    assert list(dump_lines(read_capture([("x.gz", gzip.compress(one))]))) == expected
    assert list(dump_lines(read_capture([("io", io.BytesIO(one))]))) == expected


def test_empty_null_and_missing_alike_and_old_versions_plans_md_3_1() -> None:
    base = {"process_guid": "pg", "index": 0, "domain": "cf-apps", "instance_guid": "i" * 28,
            "cell_id": "c1", "address": "10.0.0.1", "crash_count": 0, "state": "RUNNING",
            "since": 1718000000000000000, "modification_tag": {"epoch": "e", "index": 1}}
    variants = [
        {**base, "ports": None, "presence": "ORDINARY", "availability_zone": ""},
        {**base, "ports": [], "presence": 0, "OptionalRoutable": None},
        {**base},  # 2018-era: no ports key, no presence, no availability_zone
        {**base, "presence": "ordinary", "routable": True, "instance_ipv6_address": "::1",
         "some_future_key": {"x": 1}},
    ]
    cell = {"cell_id": "c1", "rep_address": "http://x", "zone": "z1",
            "capacity": {"memory_mb": 1024, "disk_mb": 1024, "containers": 10}}
    views = [read_capture([("c", json.dumps(cell).encode()), ("a", json.dumps(v).encode())])
             for v in variants]
    assert len({repr(v.rows) for v in views}) == 1
    info = {"process_guid": "pg", "domain": "cf-apps", "log_guid": "", "annotation": "", "instances": 1,
            "memory_mb": 128, "disk_mb": 256, "rootfs": "preloaded:cflinuxfs4", "max_pids": 0,
            "routes": None, "epoch": "e", "index": 2, "volume_placement": {"driver_names": None}}
    for variant in (info, {**info, "volume_placement": None, "placement_tags": []},
                    {k: v for k, v in info.items() if k not in ("routes", "volume_placement")}):
        (app,) = read_capture([("s", json.dumps(variant).encode())]).apps
        assert (app.memory_mb, app.tag, app.volume_drivers, app.placement_tags) == (128, 2, (), ())


def test_deprecated_actual_lrp_groups_are_rows() -> None:
    group = {"instance": {"process_guid": "pg-1", "index": 0, "domain": "cf-apps", "instance_guid": "",
                          "cell_id": "", "state": "UNCLAIMED", "since": 1718000000000000000,
                          "modification_tag": {"epoch": "e1", "index": 0}, "presence": "ORDINARY"},
             "evacuating": {"process_guid": "pg-1", "index": 0, "domain": "cf-apps",
                            "instance_guid": "c0d1", "cell_id": "cell-a", "state": "RUNNING",
                            "since": 1717999999000000000, "modification_tag": {"epoch": "e0", "index": 5},
                            "presence": "EVACUATING"}}
    view = read_capture([("groups", json.dumps(group).encode())])
    assert sorted(r.presence for r in view.rows) == ["EVACUATING", "ORDINARY"]


def test_kinds_are_told_by_keys() -> None:
    assert [kind_of(json.loads(line.split("\n")[0])) for _, line in
            ((n, c.decode()) for n, c in files())] == [
        "actual-lrps", "cell-states", "cells", "desired-lrps", "domains", "tasks"]


def test_errors_name_file_line_and_field_plans_md_3_1() -> None:
    row = {"process_guid": "pg", "index": 0, "domain": "d", "state": "RUNNING", "cell_id": "c",
           "since": 1, "modification_tag": {"epoch": "e", "index": 0}}
    bad = {**row, "presence": "SUSPICIOUS"}
    ok = json.dumps(row)
    assert error(("actual.jsonl", f"{ok}\n\n{json.dumps(bad)}\n")) == \
        'actual.jsonl:3: presence: unknown value "SUSPICIOUS"'
    assert error(("a", f"{ok}\n{ok}\n")) == "a:2: presence: row pg/0/ORDINARY already given at a:1"
    assert error(("a", "{not json\n")).startswith("a:1: not JSON")
    assert error(("a", '{"hello": 1}\n')) == "a:1: not a line of any cfdot command (keys: hello)"
    assert error(("a", json.dumps({**row, "index": "0"}))) == 'a:1: index: expected an integer, got "0"'
    assert error(("a", json.dumps({**row, "index": -1}))) == "a:1: index: must be at least 0, got -1"
    assert error(("a", json.dumps({**row, "process_guid": ""}))) == "a:1: process_guid: empty"
    assert error(("a", json.dumps({**row, "cell_id": "c" * 65}))) == \
        "a:1: cell_id: longer than 64 characters"
    assert error(("t", json.dumps({"task_guid": "t", "state": "Invalid"}))) == \
        't:1: state: unknown value "Invalid"'
    assert error(("t", json.dumps({"task_guid": "t", "state": 9}))) == "t:1: state: unknown value 9"
    assert error(("c", json.dumps({"cell_id": "c", "rep_address": "x", "zone": "z"}))).startswith(
        "c:1: capacity.memory_mb: must be at least 1, got 0")
    assert error(("c", json.dumps({"cell_id": "c", "rep_address": "x", "capacity": {"memory_mb": "big"}}))) \
        == 'c:1: capacity.memory_mb: expected an integer, got "big"'
    assert error(("a", json.dumps({**row, "crash_reason": "a\x00b"}))) == \
        "a:1: crash_reason: a NUL or an unpaired surrogate cannot be stored"
    assert error(("d", '"cf-apps"\n"x\\ud800"\n')) == "d:2: value: a NUL or an unpaired surrogate cannot be stored"
    assert error(("d", json.dumps("d" * 256))) == "d:1: domain: longer than 255 characters"
    # An escape that is fine is fine: cfdot escapes & < > (plans.md 3.1).
    assert read_capture([("d", b'"a\\u0026b"')]).domains == {"a&b": None}
    with pytest.raises(CaptureError, match="^g: not a readable gzip file"):
        read_capture([("g", b"\x1f\x8bnot really gzip")])
    with pytest.raises(CaptureError, match="^u:2: not UTF-8 text$"):
        read_capture([("u", b'"cf-apps"\n"\xff"\n')])


def test_deeply_nested_json_is_a_capture_error_plans_md_3_1() -> None:
    """A line nested past the JSON reader's depth answers file:line, not a RecursionError
    (the upload answered 500 and ``import_cfdot`` printed a traceback: issue 32)."""
    deep = "[" * 100_000 + "]" * 100_000
    message = error(("cells.jsonl", deep + "\n"))
    assert message.startswith("cells.jsonl:1: not JSON as cfdot prints it (nested deeper")
