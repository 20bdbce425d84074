"""Plans and capacity through the API, the services and the command (plans.md 1.5, 1.6, 2).

The live cluster is seed-example run to 60 sim-s in the database (everything placed,
the clock paused there).
"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from auction.models import AuditEntry, Plan
from auction.services.plans import (
    live_placed,
    plan_apply,
    plan_cancel,
    plan_create,
    plan_run_by_id,
    zone_loss_answer,
)
from auction.services.sim import simulate_in_database
from auction.services.store import DbStore
from auction.sim.cfdot import dump_lines
from auction.sim.driver import advance
from tests.api.cluster_state import fingerprint

pytestmark = pytest.mark.django_db


@pytest.fixture
def placed(db: None) -> None:
    simulate_in_database("seed-example", 60.0)


def live_lines() -> list[str]:
    return list(dump_lines(DbStore().cluster_view()))


def test_a_plan_answers_its_result_and_never_touches_the_live_cluster_plans_md_1_5(placed, api) -> None:  # type: ignore[no-untyped-def]
    before_lines, before = live_lines(), fingerprint()
    audits = AuditEntry.objects.count()
    status, body = api("POST", "plans", {"base": "live", "horizon_s": 600,
                                         "changes": [{"action": "fail_zone", "zone": "z2"}]})
    assert status == 201, body
    plan = body["plan"]
    assert plan["status"] == "done" and plan["progress"] == 1.0 and plan["base_now"] == 60.0
    result = plan["result"]
    # z1's two 8 GB cells cannot hold 3 x 2 GB and 2 x 5 GB: one instance stays unplaced.
    assert "z2" not in result["placed"]["lrp-a"] and "z2" not in result["placed"]["lrp-b"]
    assert result["baseline"]["placed"]["lrp-a"].get("z2", 0) > 0
    assert [u["error"] for u in result["unplaced"]] == ["insufficient resources: memory"]
    assert result["moved"] and result["time_to_converge"] == "never"
    assert f"{result['unplaced'][0]['instance']} never placed (insufficient resources: memory)" in result["warnings"]
    # Only the plan's own record and its audit entry were written.
    assert live_lines() == before_lines
    assert AuditEntry.objects.count() == audits + 1
    assert AuditEntry.objects.latest("id").action == "plan_create"
    assert fingerprint() != before  # the audit entry
    status, again = api("GET", f"plans/{plan['id']}")
    assert status == 200 and again["plan"]["result"] == result
    assert api("GET", "plans/latest")[1]["plan"]["id"] == plan["id"]
    assert api("GET", "plans/99999")[0] == 404


@pytest.mark.parametrize(("body", "message"), [
    ({"changes": [{"action": "fail_zone", "zone": "z9"}]}, "changes[0] (fail_zone): unknown zone 'z9'"),
    ({"changes": [{"action": "scale", "process_guid": "lrp-a", "instances": -2}]},
     "changes[0] (scale): Invalid field: instances"),
    ({"changes": [{"action": "scale", "process_guid": "nope", "instances": 2}]},
     "changes[0] (scale): no desired LRP 'nope'"),
    ({"changes": [], "horizon_s": 9000}, "Invalid field: horizon_s"),
    ({"changes": [], "colour": "red"}, "Invalid field: colour"),
    ({"base": "mine", "changes": []}, "no foundation named mine"),
])
def test_a_bad_plan_is_a_400_in_the_bbs_words_and_changes_nothing_plans_md_1_5(  # type: ignore[no-untyped-def]
        placed, api, body, message) -> None:
    before = fingerprint()
    status, answer = api("POST", "plans", body)
    assert (status, answer) == (400, {"error": {"type": "InvalidRequest", "message": message}})
    assert fingerprint() == before and not Plan.objects.exists()


def test_plans_are_an_operators_requests_plans_md_1_5(placed, api) -> None:  # type: ignore[no-untyped-def]
    assert api("POST", "plans", {"changes": []}, auth=False)[0] == 401
    assert not Plan.objects.exists()


def test_applying_a_scale_plan_makes_reality_match_the_prediction_plans_md_1_6(placed, operator) -> None:  # type: ignore[no-untyped-def]
    plan = plan_create({"horizon_s": 300, "changes": [
        {"action": "scale", "process_guid": "lrp-a", "instances": 6},
        {"action": "scale", "process_guid": "lrp-b", "instances": 1}]})
    assert live_placed()["lrp-a"] != plan.result["placed"]["lrp-a"]
    applied = plan_apply(plan.pk, user=operator)
    assert applied.applied_sim == 60.0 and applied.applied_at is not None
    actions = list(AuditEntry.objects.order_by("-id").values_list("action", flat=True)[:3])
    assert actions == ["plan_apply", "desired_lrp_update", "desired_lrp_update"]
    advance(DbStore(trigger_auctions=False), 60.0 + 300)
    assert live_placed() == plan.result["placed"]
    with pytest.raises(Exception, match="applied already"):
        plan_apply(plan.pk, user=operator)


def test_apply_refuses_changes_at_a_later_instant_and_leaves_the_cluster_plans_md_1_6(placed, operator) -> None:  # type: ignore[no-untyped-def]
    plan = plan_create({"horizon_s": 100, "changes": [
        {"action": "scale", "process_guid": "lrp-a", "instances": 1, "at": 30}]})
    before = live_lines()
    with pytest.raises(Exception, match=r"changes\[0\] is at 30 s: Apply performs changes at 0 only"):
        plan_apply(plan.pk, user=operator)
    assert live_lines() == before


def test_a_background_run_reports_progress_and_stops_when_cancelled_plans_md_1_5(placed) -> None:  # type: ignore[no-untyped-def]
    plan = Plan.objects.create(changes=[{"action": "fail_cell", "cell_id": "cell-1", "at": 0}], horizon_s=120)
    plan_run_by_id(plan.pk)
    plan.refresh_from_db()
    assert (plan.status, plan.progress) == ("done", 1.0) and plan.result["horizon_s"] == 120
    assert plan.report.startswith("<!DOCTYPE html>") and "http" not in plan.report
    other = Plan.objects.create(changes=[], horizon_s=120)
    plan_cancel(other.pk)
    plan_run_by_id(other.pk)
    other.refresh_from_db()
    assert other.status == "cancelled" and other.result is None


def test_capacity_counts_what_fits_per_zone_plans_md_2_1(placed, api) -> None:  # type: ignore[no-untyped-def]
    status, body = api("GET", "capacity?memory_mb=2048&disk_mb=1024")
    assert status == 200
    answer = body["capacity"]
    assert answer["stopped_by"] == "insufficient resources: memory"
    # 4 cells of 8 GB hold 3 x 2 GB + 2 x 5 GB (the two tasks are done by 60 s? no: 120 s, 90 s).
    assert answer["fits"] == sum(answer["zones"].values()) and set(answer["zones"]) == {"z1", "z2"}
    bigger = api("GET", "capacity?memory_mb=4096")[1]["capacity"]
    assert bigger["fits"] < answer["fits"]
    assert api("GET", "capacity?memory_mb=-1")[1] == {
        "error": {"type": "InvalidRequest", "message": "Invalid field: memory_mb"}}
    tagged = api("GET", "capacity?memory_mb=1&placement_tags=gpu")[1]["capacity"]
    assert tagged == {"fits": 0, "zones": {"z1": 0, "z2": 0},
                      "stopped_by": 'found no compatible cell with placement tag "gpu"'}


def test_zone_loss_per_zone_and_kept_until_the_world_changes_plans_md_2_2(placed, api) -> None:  # type: ignore[no-untyped-def]
    status, body = api("GET", "capacity/zone_loss")
    assert status == 200 and set(body["zones"]) == {"z1", "z2"}
    assert body["horizon_s"] == 75.0
    for zone in body["zones"].values():
        assert zone["status"] in ("red", "amber", "green") and zone["apps_down"] == []
    from auction.models import ZoneLossAnswer

    kept = ZoneLossAnswer.objects.get(base="live")
    assert kept.answer == body
    assert zone_loss_answer() == body
    assert ZoneLossAnswer.objects.get(base="live").computed_at == kept.computed_at  # kept, not worked out again
    from auction.services.lrps import desired_lrp_update

    desired_lrp_update("lrp-a", {"instances": 4})
    zone_loss_answer()
    again = ZoneLossAnswer.objects.get(base="live")
    assert again.computed_at > kept.computed_at and again.fingerprint != kept.fingerprint


def test_the_command_prints_the_difference_and_writes_the_report_plans_md_1_5(placed, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = StringIO()
    call_command("plan", "--change", "fail_zone zone=z2", "--horizon", "300", stdout=out)
    text = out.getvalue()
    assert "time to converge:" in text and "lrp-a:" in text and "z2" in text
    out = StringIO()
    report = tmp_path / "plan.html"
    call_command("plan", "--change", "scale process_guid=lrp-a instances=5", "--json",
                 "--report", str(report), stdout=out, stderr=StringIO())
    result = json.loads(out.getvalue())["plan"]["result"]
    assert sum(result["placed"]["lrp-a"].values()) == 5
    html = report.read_text()
    assert html.startswith("<!DOCTYPE html>") and 'id="card-plan"' in html and 'id="card-baseline"' in html
    assert not any(s in html for s in ("http:", "https:", "src=", "url("))
    with pytest.raises(CommandError, match="expected name=value"):
        call_command("plan", "--change", "fail_zone z2")
    with pytest.raises(CommandError, match="unknown zone 'z7'"):
        call_command("plan", "--change", "fail_zone zone=z7")


def test_a_plans_page_follows_it_through_the_live_layer_not_by_polling_plans_md_1_5(placed, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md L7: the run marks the plan's group on progress and at the end; the
    page's socket joins that group and its snapshot carries the plan's status."""
    from auction.live import publish
    from auction.live.views import LiveParams, region_html, topics_for

    marked: list[str] = []
    monkeypatch.setattr(publish, "mark_dirty", lambda *keys, **kw: marked.extend(keys) or True)
    plan = Plan.objects.create(changes=[], horizon_s=60)
    plan_run_by_id(plan.pk)
    assert marked and set(marked) == {f"html:plan.{plan.pk}|plan-note"}
    params = LiveParams.parse({"view": ["plans"], "plan": [str(plan.pk)]})
    assert f"plan.{plan.pk}" in topics_for(params)
    note = region_html(f"plan.{plan.pk}", params)
    assert 'id="plan-note"' in note and 'data-status="done"' in note and 'data-progress="1.000"' in note
