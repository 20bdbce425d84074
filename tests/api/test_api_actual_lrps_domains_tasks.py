"""/api/v1/actual_lrps, domains, tasks, cells, metrics, clock (issue 5; bbs.md 2, 5, 7, 9)."""

from __future__ import annotations

import pytest

from auction.models import ActualLRP, AuditEntry, Domain, Task
from auction.selectors.clock import sim_now
from auction.services.clock import clock_step
from auction.services.sim import auctioneer_run, sim_advance

pytestmark = pytest.mark.django_db


def run_until(t: float) -> None:
    while (now := sim_now()) < t - 1e-9:
        clock_step(min(1.0, t - now))
        sim_advance()
        auctioneer_run()


def test_actual_lrp_shape_follows_the_seed(api, cluster) -> None:
    """bbs.md 2.1: key and zone only when placed, net info only when RUNNING, the
    placement error only when UNCLAIMED, since in nanoseconds of the sim clock."""
    _, body = api("GET", "actual_lrps?process_guid=lrp-a&index=0")
    (row,) = body["actual_lrps"]
    assert row["state"] == "UNCLAIMED" and row["cell_id"] == "" and row["address"] == ""
    assert row["since"] == round(ActualLRP.objects.get(desired_id="lrp-a", index=0).since * 1e9)
    assert row["availability_zone"] == ""
    run_until(10)
    _, body = api("GET", "actual_lrps?process_guid=lrp-a&index=0")
    (row,) = body["actual_lrps"]
    stored = ActualLRP.objects.get(desired_id="lrp-a", index=0)
    assert row["state"] == "RUNNING" and row["cell_id"] == stored.cell_id
    assert row["since"] == round(stored.since * 1e9) and row["since"] > 0
    assert row["address"] and row["instance_guid"] and row["availability_zone"] in ("z1", "z2")
    assert set(row) == {"process_guid", "instance_guid", "cell_id", "domain", "index", "state",
                        "address", "ports", "placement_error", "since", "presence", "crash_count",
                        "crash_reason", "modification_tag", "availability_zone"}


def test_actual_lrp_filters(api, cluster) -> None:
    """The seed's filters: all, by domain, by process_guid, by index (and cell, state)."""
    _, everything = api("GET", "actual_lrps")
    assert len(everything["actual_lrps"]) == 5 and everything["next_page_token"] is None
    _, body = api("GET", "actual_lrps?domain=cf-apps")
    assert len(body["actual_lrps"]) == 5
    _, body = api("GET", "actual_lrps?domain=nope")
    assert body["actual_lrps"] == []
    _, body = api("GET", "actual_lrps?process_guid=lrp-b")
    assert [(r["process_guid"], r["index"]) for r in body["actual_lrps"]] == [("lrp-b", 0), ("lrp-b", 1)]
    _, body = api("GET", "actual_lrps?index=1")
    assert sorted(r["process_guid"] for r in body["actual_lrps"]) == ["lrp-a", "lrp-b"]
    _, body = api("GET", "actual_lrps?state=UNCLAIMED&presence=ORDINARY")
    assert len(body["actual_lrps"]) == 5
    for bad in ("index=x", "index=99999999999", "state=GONE", "presence=odd"):
        status, body = api("GET", f"actual_lrps?{bad}")
        assert status == 400 and body["error"]["message"].startswith("Invalid field: "), bad


def test_actual_lrps_page_without_skipping_or_repeating(api, cluster) -> None:
    """Issue 5: long lists page; walking the pages visits every row once, in key order."""
    api("PATCH", "desired_lrps/lrp-a", {"instances": 23})
    seen, token = [], ""
    while True:
        _, body = api("GET", f"actual_lrps?page_size=4&page_token={token}")
        seen += [(r["process_guid"], r["index"]) for r in body["actual_lrps"]]
        token = body["next_page_token"]
        if not token:
            break
    assert seen == [("lrp-a", i) for i in range(23)] + [("lrp-b", 0), ("lrp-b", 1)]


def test_killing_an_instance_keeps_desired_state_and_convergence_restarts_it(api, cluster) -> None:
    """bbs.md 2.3 Retire via the API; the next pass finds the index missing (4.2) and the
    auction places it again."""
    run_until(10)
    victim = ActualLRP.objects.get(desired_id="lrp-a", index=1)
    assert victim.state == "RUNNING"
    assert api("DELETE", "actual_lrps/lrp-a/1") == (200, {})
    assert not ActualLRP.objects.filter(desired_id="lrp-a", index=1).exists()
    assert AuditEntry.objects.filter(action="actual_lrp_retire", target="lrp-a.1", source="api").exists()
    run_until(70)  # two convergence passes at most
    back = ActualLRP.objects.get(desired_id="lrp-a", index=1)
    assert back.state == "RUNNING" and back.instance_guid != victim.instance_guid
    assert api("DELETE", "actual_lrps/lrp-a/7")[0] == 404
    assert api("DELETE", "actual_lrps/lrp-a/-1")[0] == 400
    assert api("DELETE", "actual_lrps/lrp-a/%C2%B2")[0] == 400  # "²".isdigit(), yet no int
    assert api("DELETE", "actual_lrps/lrp-a/99999999999999999999")[0] == 400


def test_domains_upsert_and_freshness(api, cluster) -> None:
    """bbs.md 5: expiry = now + ttl, ttl 0 never expires, re-upsert may shorten it; the
    list names the fresh ones."""
    status, body = api("PUT", "domains/cf-apps", {"ttl": 30})
    assert status == 200 and body["domain"]["expires_at"] == 30 * 10**9
    status, body = api("PUT", "domains/blue", {"ttl": 0})
    assert body["domain"]["expires_at"] == 0 and body["domain"]["fresh"] is True
    assert Domain.objects.get(name="blue").expires_at is None
    api("PUT", "domains/short", {"ttl": 5})
    clock_step(10)
    _, body = api("GET", "domains", auth=False)
    assert body["domains"] == ["blue", "cf-apps", "cf-tasks"]
    assert {d["domain"]: d["fresh"] for d in body["all"]}["short"] is False
    for path, payload, message in [
        ("domains/x", {"ttl": -1}, "Invalid field: ttl"),
        ("domains/x", {"ttl": "60"}, "Invalid field: ttl"),
        ("domains/x", {}, "Invalid field: ttl"),
        ("domains/x", {"ttl": 1, "extra": 1}, "Invalid field: extra"),
        ("domains/", {"ttl": 1}, "Invalid field: domain"),
    ]:
        assert api("PUT", path, payload) == (400, {"error": {"type": "InvalidRequest", "message": message}})
    assert not Domain.objects.filter(name="x").exists()
    assert AuditEntry.objects.filter(action="domain_upsert", target="blue", source="api").exists()


TASK = {"task_guid": "t-1", "domain": "cf-tasks", "rootfs": "docker:///busybox",
        "memory_mb": 128, "duration_s": 30}


def test_task_desire_get_and_timestamps_in_nanoseconds(api, cluster) -> None:
    """bbs.md 7 Desire: PENDING, created_at = updated_at = now (ns); a start request."""
    clock_step(2.5)
    status, body = api("POST", "tasks", TASK)
    assert status == 201
    task = body["task"]
    assert task["state"] == "PENDING" and task["created_at"] == task["updated_at"] == 2_500_000_000
    assert task["first_completed_at"] == 0 and task["placement_mode"] == "diego"
    assert api("GET", "tasks/t-1", auth=False)[1]["task"]["task_guid"] == "t-1"
    assert api("POST", "tasks", TASK) == (409, {"error": {
        "type": "ResourceExists", "message": "the requested resource already exists"}})
    _, body = api("GET", "tasks?domain=cf-tasks&state=PENDING")
    assert [t["task_guid"] for t in body["tasks"]] == ["t-1", "task-c", "task-d"]


@pytest.mark.parametrize(("change", "message"), [
    ({"task_guid": "bad guid"}, "Invalid field: task_guid"),
    ({"domain": ""}, "Invalid field: domain"),
    ({"rootfs": ""}, "Invalid field: rootfs"),
    ({"rootfs": "busybox"}, "Invalid field: rootfs"),
    ({"rootfs": "docker://registry:abc/img"}, "Invalid field: rootfs"),  # bbs.md 1.2 rule 3
    ({"memory_mb": -1, "disk_mb": -1, "max_pids": -1},
     "Invalid field: memory_mb, Invalid field: disk_mb, Invalid field: max_pids"),
    ({"task_guid": "", "domain": "", "rootfs": "", "annotation": "a" * 10_241},
     "Invalid field: task_guid, Invalid field: domain, Invalid field: rootfs, Invalid field: annotation"),
    ({"placement_mode": "fastest"}, "Invalid field: placement_mode"),
    ({"completion_callback_url": "ftp://x"}, "Invalid field: completion_callback_url"),
    ({"duration_s": -1}, "Invalid field: duration_s"),
    ({"memory_mb": "128"}, "Invalid field: memory_mb"),
])
def test_task_validation_messages(api, cluster, change, message) -> None:
    """bbs.md 7: task_guid, domain, rootfs (once), memory, disk, max_pids, annotation."""
    status, body = api("POST", "tasks", {**TASK, **change})
    assert (status, body) == (400, {"error": {"type": "InvalidRequest", "message": message}})
    assert not Task.objects.filter(task_guid__in=["t-1", ""]).exists()


def test_cancel_a_task_then_delete_it(api, cluster) -> None:
    """bbs.md 7 Cancel: PENDING/RUNNING → COMPLETED, failed, "task was cancelled"; its cell
    stops it. A second cancel is a refused transition; a completed task can be deleted."""
    run_until(3)
    running = Task.objects.get(task_guid="task-c")
    assert running.state == "RUNNING"
    status, body = api("POST", "tasks/task-c/cancel")
    assert status == 200
    assert (body["task"]["state"], body["task"]["failed"], body["task"]["failure_reason"],
            body["task"]["cell_id"]) == ("COMPLETED", True, "task was cancelled", "")
    assert api("POST", "tasks/task-c/cancel") == (409, {"error": {
        "type": "InvalidStateTransition", "message": "Cannot transition from COMPLETED to COMPLETED"}})
    run_until(130)  # past its 120 s run: the stopped container never completes it
    after = Task.objects.get(task_guid="task-c")
    assert (after.state, after.failed, after.failure_reason) == ("COMPLETED", True, "task was cancelled")
    api("POST", "tasks", TASK)
    assert api("DELETE", "tasks/t-1")[1]["error"]["message"] == "Cannot transition from PENDING to RESOLVING"
    api("POST", "tasks/t-1/cancel")
    assert api("DELETE", "tasks/t-1") == (200, {})
    assert not Task.objects.filter(task_guid="t-1").exists()
    assert api("POST", "tasks/nope/cancel")[0] == 404
    actions = set(AuditEntry.objects.filter(source="api").values_list("action", flat=True))
    assert {"task_desire", "task_cancel", "task_delete"} <= actions


def test_cells_metrics_and_clock(api, cluster) -> None:
    """GET /cells (presences, capacity, free); /metrics (bbs.md 9 names); /clock."""
    run_until(31)
    _, body = api("GET", "cells", auth=False)
    assert len(body["cells"]) == 4
    cell = body["cells"][0]
    assert cell["capacity"] == {"memory_mb": 8192, "disk_mb": 32768, "containers": 250}
    assert cell["presence"] is True and cell["available"]["memory_mb"] <= 8192
    _, body = api("GET", "metrics", auth=False)
    assert body["at"] == 30 * 10**9
    assert body["metrics"]["LRPsDesired"] == 5 and body["metrics"]["LRPsRunning"] == 5
    assert body["metrics"]["PresentCells"] == 4
    assert body["counters"]["ConvergenceLRPRuns"] >= 1
    status, body = api("POST", "clock", {"step": 5})
    assert status == 200 and body["clock"]["now"] == pytest.approx(36)
    assert api("POST", "clock", {"speed": 0})[1]["error"]["message"] == "Invalid field: speed"
    assert api("POST", "clock", {"rewind": 5})[1]["error"]["message"] == "Invalid field: rewind"
    assert api("POST", "clock", {"speed": 500})[1]["error"]["message"] == "Invalid field: speed"
    # Stepping a running clock is refused whole: the speed change in the same request too.
    assert api("POST", "clock", {"paused": False})[1]["clock"]["paused"] is False
    assert api("POST", "clock", {"step": 5, "speed": 2}) == (400, {"error": {
        "type": "InvalidRequest", "message": "pause the clock before stepping it"}})
    _, body = api("GET", "clock")
    assert body["clock"]["paused"] is False and body["clock"]["speed"] == 1
    status, body = api("POST", "cells/cell-1/fail")
    assert status == 200 and body["cell"]["state"] == "failed"
    assert api("POST", "cells/cell-1/restore")[1]["cell"]["state"] == "healthy"
    assert api("POST", "cells/nope/drain")[0] == 404
