"""Importing into the live cluster and keeping named foundations (plans.md 3.1-3.5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from auction.models import AuditEntry, Foundation, SimClock
from auction.services.foundations import (
    CaptureError,
    FoundationError,
    FoundationNotFound,
    foundation_import,
    foundation_names,
    foundation_view,
)
from auction.services.scenarios import scenario_load
from auction.services.store import DbStore
from auction.sim.cfdot import COMMAND_FILES, dump_lines
from auction.sim.cfdot_read import read_capture
from auction.sim.foundation_gen import FoundationShape, capture_files, make_foundation

pytestmark = pytest.mark.django_db
CAPTURES = Path(__file__).parent / "captures"
SMALL = FoundationShape(cells=24, zones=3, apps=120, instances=1500, seed=5)


def capture() -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in sorted(CAPTURES.glob("*.jsonl"))]


def dump_dir(path: Path) -> dict[str, str]:
    call_command("diego", "dump", "--dir", str(path))
    return {name: (path / name).read_text() for name in COMMAND_FILES.values()}


def live() -> tuple[list[str], list[tuple[object, ...]], int]:
    clock = SimClock.objects.values_list("anchor_sim", "paused", "advanced_to", "seed", "origin_ns",
                                         "world_epoch", "next_convergence_at").get(pk=1)
    return list(dump_lines(DbStore().cluster_view())), [clock], AuditEntry.objects.count()


def test_import_dump_import_dump_is_identical_plans_md_3_4(tmp_path: Path) -> None:
    foundation_import(capture())
    first = dump_dir(tmp_path / "1")
    assert first["cells.jsonl"].count("\n") == 3 and first["actual-lrps.jsonl"].count("\n") == 7
    call_command("import_cfdot", *(str(tmp_path / "1" / n) for n in COMMAND_FILES.values()))
    assert dump_dir(tmp_path / "2") == first
    # ... and through a named foundation (plans.md 3.3).
    call_command("import_cfdot", *(str(tmp_path / "1" / n) for n in COMMAND_FILES.values()), "--as", "prod-eu")
    scenario_load("seed-example")
    call_command("import_cfdot", "--load", "prod-eu")
    assert dump_dir(tmp_path / "3") == first


def test_a_generated_foundation_round_trips_plans_md_3_4(tmp_path: Path) -> None:
    """plans.md 3.5 writes it, 3.4 reads it back."""
    files = capture_files(make_foundation(SMALL))
    foundation_import([(COMMAND_FILES[c], "\n".join(lines).encode()) for c, lines in files.items()])
    again = dump_dir(tmp_path)
    for command, name in COMMAND_FILES.items():
        assert again[name] == "".join(line + "\n" for line in files.get(command, [])), name


def test_make_foundation_is_realistic_and_deterministic_plans_md_3_5(tmp_path: Path) -> None:
    call_command("make_foundation", "--cells", "24", "--zones", "3", "--apps", "120", "--instances", "1500",
                 "--seed", "5", "--dir", str(tmp_path / "a"))
    call_command("make_foundation", "--cells", "24", "--zones", "3", "--apps", "120", "--instances", "1500",
                 "--seed", "5", "--dir", str(tmp_path / "b"))
    a = {n: (tmp_path / "a" / n).read_bytes() for n in COMMAND_FILES.values()}
    assert a == {n: (tmp_path / "b" / n).read_bytes() for n in COMMAND_FILES.values()}
    rows = [json.loads(line) for line in a["actual-lrps.jsonl"].decode().splitlines()]
    states = [json.loads(line) for line in a["cell-states.jsonl"].decode().splitlines()]
    cells = {json.loads(line)["cell_id"] for line in a["cells.jsonl"].decode().splitlines()}
    tasks = [json.loads(line) for line in a["tasks.jsonl"].decode().splitlines()]
    infos = [json.loads(line) for line in a["desired-lrp-scheduling-infos.jsonl"].decode().splitlines()]
    domains = [json.loads(line) for line in a["domains.jsonl"].decode().splitlines()]
    assert len(cells) == 24 and sum(i["instances"] for i in infos) == 1500
    assert {r["presence"] for r in rows} == {"ORDINARY", "EVACUATING", "SUSPECT"}
    assert any(r["presence"] == "SUSPECT" and r["cell_id"] not in cells for r in rows)
    assert sum(s["Evacuating"] for s in states) == 2
    assert {r["state"] for r in rows} == {"UNCLAIMED", "CLAIMED", "RUNNING", "CRASHED"}
    assert {t["state"] for t in tasks} == {"Pending", "Running", "Completed", "Resolving"}
    assert any(i["domain"] not in domains for i in infos)  # a stale domain
    assert any(i.get("placement_tags") for i in infos) and any(s["PlacementTags"] for s in states)
    instances = sorted(i["instances"] for i in infos)
    assert instances[-1] > 10 * instances[len(instances) // 2]  # heavy-tailed
    assert min(r["since"] for r in rows) > 10**18  # UNIX nanoseconds, as cfdot prints them


def test_a_malformed_capture_changes_nothing_plans_md_3_1() -> None:
    scenario_load("seed-example")
    before = live()
    bad = capture() + [("actual.jsonl", b'{"process_guid":"x","index":0,"state":"RUNNING",'
                                         b'"presence":"SUSPICIOUS"}\n')]
    with pytest.raises(CaptureError, match='^actual.jsonl:1: presence: unknown value "SUSPICIOUS"$'):
        foundation_import(bad)
    with pytest.raises(CaptureError):
        foundation_import(bad, as_name="never")
    assert live() == before
    assert not Foundation.objects.exists()


def test_the_command_says_one_line_plans_md_3_1(tmp_path: Path) -> None:
    bad = tmp_path / "actual.jsonl"
    bad.write_text('{"process_guid":"x","index":0,"state":"RUNNING","presence":"SUSPICIOUS"}\n')
    with pytest.raises(CommandError, match='^actual.jsonl:1: presence: unknown value "SUSPICIOUS"$'):
        call_command("import_cfdot", str(bad))
    with pytest.raises(CommandError, match="No such file"):
        call_command("import_cfdot", str(tmp_path / "missing.jsonl"))


def test_import_moves_the_world_epoch_and_stops_the_scenario_timeline_plans_md_3_1() -> None:
    scenario_load("seed-example")
    epoch = SimClock.objects.get(pk=1).world_epoch
    result = foundation_import(capture())
    clock = SimClock.objects.get(pk=1)
    assert clock.world_epoch == epoch + 1 and clock.origin_ns == 1718003470000000000
    assert result.summary["cells"] == 3 and result.name is None
    assert DbStore()._timeline() == []
    assert AuditEntry.objects.filter(action="foundation_import").count() == 1
    scenario_load("seed-example")  # a scenario starts its own clock at 0 again
    assert SimClock.objects.get(pk=1).origin_ns == 0


def test_named_foundations_plans_md_3_3() -> None:
    scenario_load("seed-example")
    before = live()
    result = foundation_import(capture(), as_name="prod-eu")
    # The live cluster is untouched; the keep is audited.
    assert result.name == "prod-eu" and live()[:2] == before[:2] and live()[2] == before[2] + 1
    assert foundation_names() == ["prod-eu"]
    view = foundation_view("prod-eu")
    assert len(view.cells) == 3 and len(view.rows) == 7
    # Read back from its packed snapshot, or from its capture: the same cluster.
    read = read_capture(capture())
    assert list(dump_lines(view)) == list(dump_lines(read)) and view.rows == read.rows
    assert view.loads == read.loads and view.origin_ns == read.origin_ns
    Foundation.objects.update(snapshot=b"")
    assert list(dump_lines(foundation_view("prod-eu"))) == list(dump_lines(read))
    Foundation.objects.update(snapshot=b"not packed")
    assert list(dump_lines(foundation_view("prod-eu"))) == list(dump_lines(read))
    assert any("old-rep-cell" in a for a in view.assumptions)
    assert b"SECRET" not in bytes(Foundation.objects.get().capture)
    with pytest.raises(FoundationError, match="exists already"):
        foundation_import(capture(), as_name="prod-eu")
    with pytest.raises(FoundationError, match="1-64 letters"):
        foundation_import(capture(), as_name="no spaces")
    with pytest.raises(FoundationNotFound, match="no foundation named 'nope'"):
        foundation_view("nope")
    with pytest.raises(LookupError):
        foundation_view("nope")


def test_the_command_exits_1_with_one_line_and_no_traceback_plans_md_3_1(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    bad = tmp_path / "actual.jsonl"
    bad.write_text('{"process_guid":"x","index":0,"state":"RUNNING","presence":"SUSPICIOUS"}\n')
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "manage.py", "import_cfdot", str(bad)], cwd=repo, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "DIEGO_VAR_DIR": str(tmp_path)})
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == ['CommandError: actual.jsonl:1: presence: unknown value "SUSPICIOUS"']


def test_a_silent_cell_says_its_presence_is_held_not_lapsing_plans_md_3_2(client) -> None:  # type: ignore[no-untyped-def]
    """plans.md 3.2 point 2: a cell with a presence and no cell-state is failed but its
    presence stays; the grid must not count down to a lapse that never comes."""
    foundation_import(capture())
    html = client.get("/grid/").content.decode()
    cell = html[html.index('id="cell-old-rep-cell"'):]
    cell = cell[:cell.index("</article>")]
    assert "not answering · presence held" in cell and 'data-presence="held"' in cell
    assert "presence lapses in" not in cell
