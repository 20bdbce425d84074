"""Named scenarios through the database shell (dashboard.md C4): the same file, the same
placements as the in-memory cluster, timelines fired by the tick, reset to checkpoint."""

from __future__ import annotations

from collections import Counter

import pytest
from django.core.management import call_command

from auction.bbs import types as core
from auction.models import ActualLRP, AuditEntry, BBSEvent, Cell, ConvergenceRun, SimClock
from auction.selectors.clock import sim_now
from auction.services.clock import clock_reset, clock_step
from auction.services.scenarios import scenario_load, scenario_reset
from auction.services.sim import auctioneer_run, sim_advance
from auction.sim.scenario import world_from_scenario

pytestmark = pytest.mark.django_db


def load(name: str) -> None:
    scenario_load(name)
    clock_reset(0.0, paused=True)
    auctioneer_run()


def run_until(t: float) -> None:
    """What beat's sim_tick does, once per sim second on a paused clock."""
    while (now := sim_now()) < t - 1e-9:
        clock_step(min(1.0, t - now))
        sim_advance()


def db_placements() -> dict[str, str]:
    return {f"{g}.{i}": c for g, i, c in ActualLRP.objects.filter(
        presence="ORDINARY", state__in=["CLAIMED", "RUNNING"]).values_list("desired_id", "index", "cell_id")}


def memory_placements(name: str, until: float) -> dict[str, str]:
    world = world_from_scenario(name)
    world.run_until(until)
    return {core.lrp_id(k): r.cell_id for k, r in world.rows.items()
            if k[2] == core.ORDINARY and r.state in (core.CLAIMED, core.RUNNING)}


def test_boulders_pebbles_in_the_database_matches_memory() -> None:
    """dashboard.md C4 boulders-pebbles: red.1 fails; the DB shell places as the in-memory sim."""
    load("boulders-pebbles")
    red1 = ActualLRP.objects.get(desired_id="red", index=1)
    assert (red1.state, red1.placement_error) == ("UNCLAIMED", "insufficient resources: memory")
    assert db_placements() == memory_placements("boulders-pebbles", 1)
    assert SimClock.objects.get(pk=1).seed == 0


def test_az_loss_timeline_in_the_database() -> None:
    """dashboard.md C4 az-loss via the tick: z3 fails at 60 s, is back at 300 s; no rebalancing."""
    load("az-loss")
    assert db_placements() == memory_placements("az-loss", 1)
    run_until(61)
    assert set(Cell.objects.filter(zone__name="z3").values_list("state", flat=True)) == {"failed"}
    run_until(125)
    metrics = ConvergenceRun.objects.get(at=90.0).metrics
    assert metrics["SuspectCells"] == 4
    on = Counter(c.split("-")[0] for c in db_placements().values())
    assert on["z3"] == 0 and sum(on.values()) == 36
    run_until(330)
    assert set(Cell.objects.filter(zone__name="z3").values_list("state", flat=True)) == {"healthy"}
    assert Counter(c.split("-")[0] for c in db_placements().values())["z3"] == 0
    assert ConvergenceRun.objects.order_by("-at").first().metrics["LRPsMissing"] == 0
    fired = list(AuditEntry.objects.filter(action="scenario_step").values_list("target", flat=True))
    assert sorted(fired) == ["0:zone_fail@60", "1:zone_restore@300"], "each step fires once"


def test_reset_to_checkpoint_in_the_database() -> None:
    """dashboard.md C4: reset reloads the last scenario (its checkpoint) at sim time 0."""
    load("inflight-cap")
    run_until(70)
    scenario_reset()
    assert sim_now() == pytest.approx(0.0, abs=0.5)
    assert set(ActualLRP.objects.values_list("state", flat=True)) == {"UNCLAIMED"}
    assert SimClock.objects.get(pk=1).next_convergence_at == 30.0
    call_command("load_scenario", "--reset")
    assert ActualLRP.objects.count() == 10


def test_inflight_cap_in_the_database() -> None:
    """dashboard.md C4 inflight-cap: the live auctioneer takes the scenario's cap of 3."""
    load("inflight-cap")
    states = Counter(ActualLRP.objects.values_list("state", flat=True))
    assert states == Counter({"CLAIMED": 3, "UNCLAIMED": 7})
    errors = set(ActualLRP.objects.filter(state="UNCLAIMED").values_list("placement_error", flat=True))
    assert errors == {"waiting to start instance: reached in-flight start limit"}
    assert db_placements() == memory_placements("inflight-cap", 1)


def test_drain_in_the_database_matches_memory() -> None:
    """bbs.md 6.3 / C3: one evacuation rule (auction.sim.reps.evacuation_plan) in both shells."""
    from auction.services.cells import cell_drain

    load("seed-example")
    run_until(10)
    cell_drain("cell-1")
    run_until(60)
    world = world_from_scenario("seed-example")
    world.run_until(10)
    world.cell_drain("cell-1")
    world.run_until(60)
    mem = {core.lrp_id(k): r.cell_id for k, r in world.rows.items()
           if k[2] == core.ORDINARY and r.state in (core.CLAIMED, core.RUNNING)}
    assert db_placements() == mem
    assert "cell-1" not in mem.values()
    assert not ActualLRP.objects.filter(presence="EVACUATING").exists()
    assert Cell.objects.get(cell_id="cell-1").presence_lost_at == world.cells["cell-1"].presence_lost_at


def test_a_refused_timeline_step_is_recorded_once() -> None:
    """dashboard.md C4: a step the cluster refuses does not break the tick or repeat."""
    from auction.services.lrps import desired_lrp_desire

    load("imbalanced-deploy")
    desired_lrp_desire({"process_guid": "new-01", "domain": "cf-apps", "instances": 1})  # an operator was first
    sim_advance(50)
    sim_advance(51)
    steps = list(AuditEntry.objects.filter(action="scenario_step").order_by("pk")
                 .values_list("target", flat=True))
    assert steps == ["0:cell_restore@40", "1:desire_lrps@45"], "each step once"
    note = BBSEvent.objects.get(type="scenario_step", key="1:desire_lrps@45")
    assert note.data["outcome"] == "refused: desired LRP 'new-01' already exists"
    assert not ActualLRP.objects.filter(desired_id="new-02").exists(), "all or nothing"
    assert Cell.objects.get(cell_id="cell-20").state == "healthy"
