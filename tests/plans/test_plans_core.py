"""Plans in the core (plans.md 1.2-1.4): changes checked with the live actions' messages,
applied to a clone at their instants, run beside the baseline, measured at the horizon."""

from __future__ import annotations

import pytest

from auction.engine import AuctionConfig
from auction.sim.memory import World
from auction.sim.model import SimApp, SimCell
from auction.sim.plan_changes import PlanError, parse_change, plan_changes, plan_horizon
from auction.sim.plans import plan_result, run_plan, zone_loss
from auction.sim.scenario import world_from_scenario


def three_zones(instances: int = 6, per_zone: int = 2, memory_mb: int = 8192) -> World:
    world = World(seed=1, config=AuctionConfig(seed=1))
    for z in range(3):
        for i in range(per_zone):
            world.add_cell(SimCell(f"z{z + 1}-cell-{i}", f"z{z + 1}", index=i, memory_mb=memory_mb))
    world.upsert_domain("cf-apps", 0)
    world.desire_lrp(SimApp("web", instances=instances, memory_mb=1024))
    world.desire_lrp(SimApp("worker", instances=2, memory_mb=2048))
    world.run_until(60)
    return world


def test_changes_are_checked_with_the_live_actions_messages_plans_md_1_2() -> None:
    assert plan_changes([{"action": "scale", "process_guid": "web", "instances": 3}])[0].args == {
        "process_guid": "web", "instances": 3}
    cases = [
        ([{"action": "scale", "process_guid": "web", "instances": -1}],
         "changes[0] (scale): Invalid field: instances"),
        ([{"action": "scale", "process_guid": "web"}], "changes[0] (scale): Invalid field: instances"),
        ([{"action": "fail_zone"}], "changes[0] (fail_zone): Invalid field: zone"),
        ([{"action": "fail_zone", "zone": "z1", "colour": "red"}],
         "changes[0] (fail_zone): Invalid field: colour"),
        ([{"action": "explode"}], "changes[0] (explode): unknown change 'explode'; known: add_cells, "
                                  "auction_config, desire, drain_cell, fail_cell, fail_zone, remove, "
                                  "remove_cell, restore_cell, restore_zone, scale"),
        ([{"action": "desire", "process_guid": "new", "instances": 1, "memory_mb": -5}],
         "changes[0] (desire): Invalid field: memory_mb"),
        ([{"action": "add_cells", "zone": "z1", "count": 2, "memory_mb": 0}],
         "changes[0] (add_cells): Invalid field: memory_mb"),
        ([{"action": "auction_config", "starting_container_weight": -1e9}],
         "changes[0] (auction_config): Invalid field: starting_container_weight"),
        ([{"action": "auction_config", "strategy": "magic"}],
         "changes[0] (auction_config): Invalid field: placement_strategy"),
        ([{"action": "fail_zone", "zone": "z1", "at": 5000}], "changes[0] (fail_zone): Invalid field: at"),
        ("nope", "Invalid field: changes"),
    ]
    for raw, message in cases:
        with pytest.raises(PlanError) as caught:
            plan_changes(raw, 600)
        assert caught.value.message == message
    with pytest.raises(PlanError, match="Invalid field: horizon_s"):
        plan_horizon(3601)
    assert plan_horizon(None) == 600


def test_the_command_line_form_of_a_change_plans_md_1_5() -> None:
    assert parse_change("fail_zone zone=z2 at=30") == {"action": "fail_zone", "zone": "z2", "at": "30"}
    change = plan_changes([parse_change("scale process_guid=web instances=9 at=30")])[0]
    assert (change.args["instances"], change.at) == (9, 30.0)
    with pytest.raises(PlanError, match="expected name=value"):
        parse_change("fail_zone z2")


def test_unknown_names_are_refused_before_running_plans_md_1_2() -> None:
    base = three_zones()
    with pytest.raises(PlanError) as caught:
        run_plan(base, plan_changes([{"action": "fail_zone", "zone": "z9"}]))
    assert (caught.value.message, caught.value.status) == ("changes[0] (fail_zone): unknown zone 'z9'", 404)
    with pytest.raises(PlanError, match="no desired LRP 'ghost'"):
        run_plan(base, plan_changes([{"action": "scale", "process_guid": "ghost", "instances": 1}]))


def test_a_plan_leaves_its_base_alone_and_the_baseline_is_the_base_run_on_plans_md_1_3() -> None:
    base = three_zones()
    before = base.cluster_view()
    run = run_plan(base, plan_changes([{"action": "fail_zone", "zone": "z2"}]), 300)
    assert base.cluster_view() == before
    untouched = base.clone()
    untouched.run_until(base.now + 300)
    assert run.baseline.cluster_view().rows == untouched.cluster_view().rows
    assert run.plan.now == run.baseline.now == base.now + 300


def test_a_zone_failure_moves_its_instances_and_converges_again_plans_md_1_4() -> None:
    base = three_zones()
    result = plan_result(run_plan(base, plan_changes([{"action": "fail_zone", "zone": "z2"}]), 600))
    assert result["baseline"]["placed"]["web"] == {"z1": 2, "z2": 2, "z3": 2}
    assert result["placed"]["web"].get("z2", 0) == 0
    assert sum(result["placed"]["web"].values()) == 6
    assert {m["from"][:2] for m in result["moved"]} == {"z2"}
    assert all(m["to"][:2] in ("z1", "z3") for m in result["moved"])
    assert len(result["moved"]) == 2 + sum(1 for v in result["baseline"]["placed"]["worker"] if v == "z2")
    assert result["stopped"] == []
    ttc = result["time_to_converge"]
    assert isinstance(ttc, float) and 15 < ttc < 120  # the lapse, a pass, the auction, the start
    assert result["baseline"]["time_to_converge"] == 0.0
    assert result["zones"]["z2"]["memory_free_mb"] == 0
    assert result["zones"]["z1"]["memory_reserved_mb"] > result["baseline"]["zones"]["z1"]["memory_reserved_mb"]
    assert any(a["placed"] for a in result["auctions"]) and result["passes"]
    assert result["unplaced"] == [] and result["warnings"] == []
    assert len(result["series"]["plan"]) == 61


def test_unplaced_work_carries_its_error_and_a_warning_plans_md_1_4() -> None:
    base = three_zones(per_zone=1, memory_mb=4096)
    result = plan_result(run_plan(base, plan_changes([
        {"action": "scale", "process_guid": "web", "instances": 12, "at": 10}]), 300))
    left = [u for u in result["unplaced"] if u["instance"].startswith("web.")]
    assert left and all(u["error"] == "insufficient resources: memory" for u in left)
    assert all(u["since"] >= base.now + 10 for u in left)
    assert result["time_to_converge"] == "never"
    assert f"{len(left)} instances of web never placed (insufficient resources: memory)" in result["warnings"]
    assert not any(w.startswith("web.") for w in result["warnings"])  # grouped, not one a line


def test_scale_down_and_remove_stop_instances_plans_md_1_4() -> None:
    base = three_zones()
    result = plan_result(run_plan(base, plan_changes([
        {"action": "scale", "process_guid": "web", "instances": 4},
        {"action": "remove", "process_guid": "worker", "at": 30}]), 120))
    stopped = sorted(s["instance"] for s in result["stopped"])
    assert stopped == ["web.4", "web.5", "worker.0", "worker.1"]
    assert "worker" not in result["placed"] and sum(result["placed"]["web"].values()) == 4


def test_one_zone_holding_every_instance_is_warned_plans_md_1_4() -> None:
    base = three_zones()
    result = plan_result(run_plan(base, plan_changes([
        {"action": "fail_zone", "zone": "z1"}, {"action": "fail_zone", "zone": "z2"}]), 300))
    assert "z3 would hold 6 of 6 instances of web" in result["warnings"]
    assert result["zone_skew"]["web"] == 6


def test_added_cells_removed_cells_drains_and_settings_plans_md_1_2() -> None:
    base = three_zones(per_zone=1, memory_mb=4096)
    run = run_plan(base, plan_changes([
        {"action": "add_cells", "zone": "z4", "count": 2, "memory_mb": 16384},
        {"action": "scale", "process_guid": "web", "instances": 20, "at": 1},
        {"action": "drain_cell", "cell_id": "z1-cell-0", "at": 100},
        {"action": "remove_cell", "cell_id": "z2-cell-0", "at": 100},
        {"action": "auction_config", "strategy": "dea", "at": 50}]), 400)
    result = plan_result(run)
    assert {"z4-plan-1", "z4-plan-2"} <= set(run.plan.cells) and "z2-cell-0" not in run.plan.cells
    assert result["placed"]["web"].get("z4", 0) > 0
    assert run.plan.config.placement_strategy == "dea"
    assert result["zones"]["z1"]["memory_free_mb"] == 0  # draining: takes nothing
    assert run.baseline.config.placement_strategy == base.config.placement_strategy


def test_a_plan_reports_progress_and_can_be_cancelled_plans_md_1_5() -> None:
    from auction.sim.plans import PlanCancelled

    seen: list[float] = []
    run_plan(three_zones(), [], 60, progress=seen.append)
    assert seen[0] == 0 and seen[-1] == 1 and seen == sorted(seen)
    with pytest.raises(PlanCancelled):
        run_plan(three_zones(), [], 60, cancelled=lambda: True)


def test_zone_loss_names_apps_down_and_degraded_plans_md_2_2() -> None:
    world = world_from_scenario("seed-example")
    world.run_until(60)
    z1 = zone_loss(world, "z1")
    assert z1["apps_down"] == [] and z1["status"] in ("green", "amber")
    lonely = three_zones()
    lonely.desire_lrp(SimApp("solo", instances=1, memory_mb=60_000 // 10, placement_tags=()))
    lonely.run_until(120)
    where = next(r.cell_id for r in lonely.rows.values() if r.process_guid == "solo")
    loss = zone_loss(lonely, where[:2])
    assert loss["status"] in ("green", "amber")  # "solo" is placed again in another zone
    full = three_zones(per_zone=1, memory_mb=4096)
    tight = zone_loss(full, "z1")
    assert tight["unplaced"] > 0 or tight["apps_degraded"]
    assert tight["status"] != "green"


def test_a_plans_report_card_is_self_contained_and_byte_identical_plans_md_1_5() -> None:
    """plans.md 4.2: no URL; the same plan on the same base gives the same bytes."""
    from auction.report.plan import plan_report

    changes = plan_changes([{"action": "fail_zone", "zone": "z2"},
                            {"action": "scale", "process_guid": "web", "instances": 8, "at": 20}])
    first = plan_report(run_plan(three_zones(), changes, 200), version="test")
    second = plan_report(run_plan(three_zones(), changes, 200), version="test")
    assert first == second
    assert not any(s in first for s in ("http:", "https:", "//", "src=", "url("))
    assert 'id="card-plan"' in first and 'id="card-baseline"' in first
    assert "fail_zone zone=z2; scale process_guid=web instances=8 at 20 s" in first


def test_a_plans_report_never_stars_the_baseline_plans_md_4_4() -> None:
    """plans.md 4.4: ★ is where the plan does better than the baseline; never the baseline."""
    import re

    from auction.report.plan import plan_report_card
    from auction.report.render import render_report

    report = plan_report_card(run_plan(three_zones(), plan_changes([{"action": "fail_zone", "zone": "z2"}]), 200),
                              version="test")
    plan, baseline = report.cards
    assert baseline.best == frozenset()
    assert report.best_note == "★ marks where the plan does better than the baseline."
    for name in plan.best:  # a starred row is strictly lower for the plan
        assert plan.metrics.value(name) < baseline.metrics.value(name)

    html = render_report(report)
    assert "does better than the baseline" in html
    # The quality table's baseline column (the second of each row) is never starred.
    rows = re.findall(r'<tr data-metric="[^"]+"><th scope="row">[^<]*</th>(<td.*?</td>)(<td.*?</td>)</tr>', html)
    assert rows and not any('data-best="true"' in base for _, base in rows)
