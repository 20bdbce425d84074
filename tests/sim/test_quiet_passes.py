"""docs/behaviour/bbs.md 4.5: the in-memory world hands a quiet LRP half to the next pass
while no row was written; worlds, clones and plans answer bit for bit as without it."""

from __future__ import annotations

import random
from typing import Any

import pytest

from auction.bbs import convergence
from auction.bbs import types as core
from auction.engine import AuctionConfig
from auction.sim.base import world_from_view
from auction.sim.bench_plans import synthetic_view
from auction.sim.memory import SimApp, SimCell, SimTask, World
from auction.sim.memory.check import CHECK_SETTING
from auction.sim.plan_changes import plan_changes
from auction.sim.plans import plan_result, run_plan_worlds


def _no_durations(value: Any) -> Any:
    """The pass's own timing is the only thing allowed to differ."""
    if isinstance(value, dict):
        return {k: _no_durations(v) for k, v in value.items() if "Duration" not in k and k != "wall_seconds"}
    if isinstance(value, list | tuple):
        return [_no_durations(v) for v in value]
    return value


def fingerprint(world: World) -> dict[str, Any]:
    return {"passes": _no_durations(world.passes), "log": list(world.log), "timeline": list(world.timeline),
            "rows": sorted(world.rows.values(), key=lambda r: r.key), "counters": dict(world.counters),
            "auctions": len(world.auctions), "now": world.now}


def settling_world() -> World:
    """No crashes, so most passes find nothing: a zone lost and back, a domain that expires
    mid-run, a scale down and up, and a task."""
    rng = random.Random(3)
    world = World(seed=1, config=AuctionConfig(seed=1))
    for n in range(30):
        world.add_cell(SimCell(f"cell-{n:03d}", ("z1", "z2", "z3")[n % 3], n // 3,
                               memory_mb=8192, disk_mb=32768, containers=50))
    world.upsert_domain("cf-apps", 400)
    for a in range(40):
        world.desire_lrp(SimApp(f"app-{a:03d}", instances=rng.randint(1, 4), memory_mb=rng.choice((128, 256, 512)),
                                disk_mb=512, start_delay_s=rng.uniform(1, 5)))
    world.desire_task(SimTask(core.Task("t-1", core.PENDING, domain="cf-apps"), memory_mb=64, duration_s=90))
    world.schedule_action(200, "zone_fail", zone="z2")
    world.schedule_action(500, "zone_restore", zone="z2")
    world.schedule_action(700, "scale", process_guid="app-005", instances=1)
    world.schedule_action(760, "scale", process_guid="app-006", instances=9)
    return world


def run(world: World) -> tuple[dict[str, Any], dict[str, Any]]:
    clone = None
    for until in range(50, 1250, 50):
        world.run_until(until)
        if until == 600:
            clone = world.clone()
    assert clone is not None
    clone.run_until(1500)
    return fingerprint(world), fingerprint(clone)


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The instants at which a pass walked the rows (the quiet half did not answer); the
    check mode, which walks every pass beside the quiet one, is off while they are counted."""
    monkeypatch.delenv(CHECK_SETTING, raising=False)
    walked: list[float] = []
    real = convergence._lrps

    def counted(snapshot: core.Snapshot, *args: Any) -> Any:
        walked.append(snapshot.now)
        return real(snapshot, *args)

    monkeypatch.setattr(convergence, "_lrps", counted)
    return walked


def without_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(convergence, "quiet_lrps", lambda *args: None)


def test_a_settling_world_and_its_clone_run_as_without_quiet_passes(
        walks: list[float], monkeypatch: pytest.MonkeyPatch) -> None:
    quiet = run(settling_world())
    world_passes, clone_passes = quiet[0]["passes"], quiet[1]["passes"]
    passes = len(world_passes) + sum(1 for at, _ in clone_passes if at > 600)
    assert len(walks) < passes / 2, (len(walks), passes)  # most passes answered by the quiet half
    assert world_passes[-1][1]["LRPsRunning"] == world_passes[-1][1]["LRPsDesired"]  # settled
    walks.clear()
    without_quiet(monkeypatch)
    assert run(settling_world()) == quiet
    assert len(walks) == passes  # every pass walked its rows


def test_a_zone_failure_plan_answers_as_without_quiet_passes(
        walks: list[float], monkeypatch: pytest.MonkeyPatch) -> None:
    """plans.md 1.4: the plan's diff, series and passes are the same."""
    def plan() -> dict[str, Any]:
        view = synthetic_view(60, 1500, seed=2)
        base = world_from_view(view, AuctionConfig(seed=2), seed=2)
        baseline = world_from_view(view, AuctionConfig(seed=2), seed=2)
        run_ = run_plan_worlds(base, baseline, plan_changes([{"action": "fail_zone", "zone": "z2"}]), 600.0)
        return _no_durations(plan_result(run_))

    quiet = plan()
    quiet_walks = len(walks)
    without_quiet(monkeypatch)
    walks.clear()
    assert plan() == quiet
    assert quiet_walks < len(walks) / 3, (quiet_walks, len(walks))


def test_plain_apps_answer_as_every_row_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """bbs.md 4.5: a pass that takes the last pass's plain apps as they were answers as one
    that reads every row; a zone lost and back, crashes, a scale, a clone mid-run."""
    from auction.bbs.plain_apps import PlainApps
    from auction.sim.bench import build

    def crashing() -> World:
        world = build(30, seed=4, per_cell=6)
        world.schedule_action(400, "scale", process_guid="app-00002", instances=7)
        return world

    used: list[float] = []
    real = PlainApps.holds_for

    def counted(self: PlainApps, cells: frozenset[str], desired: Any) -> bool:
        holds = real(self, cells, desired)
        if holds:
            used.append(len(self.apps))
        return holds

    monkeypatch.setattr(PlainApps, "holds_for", counted)
    kept = [run(settling_world()), run(crashing())]
    assert used  # some passes took plain apps
    monkeypatch.setattr(PlainApps, "holds_for", lambda self, cells, desired: False)
    assert [run(settling_world()), run(crashing())] == kept
