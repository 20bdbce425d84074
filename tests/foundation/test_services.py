"""Services: desire/update/remove (bbs.md 1.4), domains (bbs.md 5), scenarios (dashboard.md C4)."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from auction import scenarios
from auction.models import ActualLRP, Cell, DesiredLRP, Domain, Task, Zone
from auction.scenarios import ScenarioError
from auction.services.clock import clock_reset, clock_step
from auction.services.domains import domain_upsert
from auction.services.errors import InvalidRequest, ResourceExists, ResourceNotFound
from auction.services.lrps import desired_lrp_desire, desired_lrp_remove, desired_lrp_update
from auction.services.scenarios import scenario_load
from auction.services.tasks import task_desire

pytestmark = pytest.mark.django_db

WEB = {"process_guid": "web", "domain": "cf-apps", "instances": 3, "memory_mb": 256}


def test_desire_creates_unclaimed_instances() -> None:
    """bbs.md 1.4: an ORDINARY UNCLAIMED ActualLRP for every index 0 … instances−1."""
    desired_lrp_desire(WEB)
    rows = list(ActualLRP.objects.filter(desired_id="web").order_by("index"))
    assert [(r.index, r.state, r.presence, r.domain) for r in rows] == [
        (i, "UNCLAIMED", "ORDINARY", "cf-apps") for i in range(3)]


def test_desire_twice_is_resource_exists() -> None:
    """bbs.md 1.2: desiring an existing guid → ResourceExists, nothing changed."""
    desired_lrp_desire(WEB)
    with pytest.raises(ResourceExists) as info:
        desired_lrp_desire({**WEB, "instances": 9})
    assert info.value.message == "the requested resource already exists"
    assert ActualLRP.objects.count() == 3


def test_desire_invalid_writes_nothing() -> None:
    """bbs.md 1.2: the joined message; no row written."""
    with pytest.raises(InvalidRequest) as info:
        desired_lrp_desire({**WEB, "rootfs": "", "instances": -1})
    assert info.value.message == "Invalid field: rootfs, Invalid field: rootfs, Invalid field: instances"
    with pytest.raises(InvalidRequest) as info:
        desired_lrp_desire({**WEB, "colour": "red"})
    assert info.value.message == "Invalid field: colour"
    assert not DesiredLRP.objects.exists() and not ActualLRP.objects.exists()


def test_update_scales_up_and_down_and_bumps_tag() -> None:
    """bbs.md 1.4: tag + 1 even when nothing changes; scale-down deletes UNCLAIMED/CRASHED."""
    desired_lrp_desire(WEB)
    assert desired_lrp_update("web", {}).modification_tag_index == 1
    desired_lrp_update("web", {"instances": 5})
    assert sorted(ActualLRP.objects.values_list("index", flat=True)) == [0, 1, 2, 3, 4]
    zone = Zone.objects.create(name="z1")
    Cell.objects.create(cell_id="cell-1", zone=zone)
    Cell.objects.create(cell_id="gone", zone=zone, state="failed", presence_lost_at=-1.0)
    ActualLRP.objects.filter(index=1).update(state="CRASHED", crash_count=3)
    ActualLRP.objects.filter(index=2).update(state="RUNNING", cell_id="cell-1")
    ActualLRP.objects.filter(index=3).update(state="RUNNING", cell_id="gone")
    lrp = desired_lrp_update("web", {"instances": 1})
    assert lrp.modification_tag_index == 3
    # The stop reaches cell-1 (its rep removes the container); the row on a cell without
    # presence stays for convergence.
    assert sorted(ActualLRP.objects.values_list("index", "state")) == [(0, "UNCLAIMED"), (3, "RUNNING")]


def test_update_errors() -> None:
    """bbs.md 1.3: unknown guid → ResourceNotFound; other members → InvalidRequest."""
    with pytest.raises(ResourceNotFound):
        desired_lrp_update("nope", {"instances": 1})
    desired_lrp_desire(WEB)
    with pytest.raises(InvalidRequest) as info:
        desired_lrp_update("web", {"memory_mb": 1})
    assert info.value.message == "Invalid field: memory_mb"
    assert DesiredLRP.objects.get().modification_tag_index == 0


def test_remove_scales_down_to_zero() -> None:
    """bbs.md 1.4: remove deletes the DesiredLRP, then scale-down to 0."""
    desired_lrp_desire(WEB)
    desired_lrp_remove("web")
    assert not DesiredLRP.objects.exists() and not ActualLRP.objects.exists()
    with pytest.raises(ResourceNotFound):
        desired_lrp_remove("web")


def test_task_desire() -> None:
    """bbs.md 7: PENDING with created_at = updated_at = now; duplicates refused."""
    clock_reset(0.0, paused=True)
    clock_step(42)
    task = task_desire({"task_guid": "t1", "domain": "cf-tasks", "memory_mb": 64})
    assert (task.state, task.created_at, task.updated_at) == ("PENDING", 42.0, 42.0)
    with pytest.raises(ResourceExists):
        task_desire({"task_guid": "t1", "domain": "cf-tasks"})
    with pytest.raises(InvalidRequest) as info:
        task_desire({"task_guid": "t2", "domain": "", "rootfs": ""})
    assert info.value.message == "Invalid field: domain, Invalid field: rootfs"


def test_domain_upsert_replaces_expiry() -> None:
    """bbs.md 5: expiry = now + ttl; re-upsert may shorten it; ttl 0 never expires."""
    clock_reset(0.0, paused=True)
    clock_step(100)
    assert domain_upsert("cf-apps", 120).expires_at == 220
    assert domain_upsert("cf-apps", 10).expires_at == 110
    assert domain_upsert("cf-apps", 0).expires_at is None
    assert Domain.objects.count() == 1
    with pytest.raises(InvalidRequest):
        domain_upsert("", 5)


def test_seed_example_scenario() -> None:
    """dashboard.md C4 seed-example: 4 cells of 8 GB in 2 AZs, LRP-A 3x2, LRP-B 2x5, tasks 4 and 3."""
    scenario_load("seed-example")
    assert list(Zone.objects.values_list("name", flat=True)) == ["z1", "z2"]
    cells = list(Cell.objects.values_list("cell_id", "zone__name", "memory_mb"))
    assert cells == [("cell-1", "z1", 8192), ("cell-2", "z1", 8192),
                     ("cell-3", "z2", 8192), ("cell-4", "z2", 8192)]
    assert dict(DesiredLRP.objects.values_list("process_guid", "instances")) == {"lrp-a": 3, "lrp-b": 2}
    assert dict(DesiredLRP.objects.values_list("process_guid", "memory_mb")) == {"lrp-a": 2048, "lrp-b": 5120}
    assert dict(Task.objects.values_list("task_guid", "memory_mb")) == {"task-c": 4096, "task-d": 3072}
    assert ActualLRP.objects.filter(state="UNCLAIMED").count() == 5


def test_loading_a_scenario_replaces_the_cluster() -> None:
    """dashboard.md C4: load resets to the scenario (same input, same cluster)."""
    scenario_load("seed-example")
    desired_lrp_desire(WEB)
    scenario_load("seed-example")
    assert not DesiredLRP.objects.filter(process_guid="web").exists()
    assert ActualLRP.objects.count() == 5


def test_unknown_and_malformed_scenarios_are_clear_errors() -> None:
    """Bad input gets a clear message naming the field, and loses no data."""
    scenario_load("seed-example")
    with pytest.raises(ScenarioError, match="unknown scenario 'nope'"):
        scenario_load("nope")
    with pytest.raises(ScenarioError, match=r"x\.cells\[0\]\.memory_mb: wrong type"):
        scenarios.check({"name": "x", "zones": ["z"], "cells": [{"cell_id": "c", "zone": "z",
                                                                 "memory_mb": "lots"}]}, "x")
    with pytest.raises(ScenarioError, match=r"x\.cells\[0\]\.zone: 'q' is not in zones"):
        scenarios.check({"name": "x", "zones": ["z"], "cells": [{"cell_id": "c", "zone": "q"}]}, "x")
    with pytest.raises(ScenarioError, match=r"x\.colour: unknown field"):
        scenarios.check({"name": "x", "zones": ["z"], "cells": [], "colour": 1}, "x")
    assert Cell.objects.count() == 4


def test_load_scenario_command(capsys: pytest.CaptureFixture[str]) -> None:
    """The management command lists and loads; --if-empty keeps an existing cluster."""
    call_command("load_scenario", "--list")
    assert "seed-example" in capsys.readouterr().out
    call_command("load_scenario", "seed-example")
    desired_lrp_desire(WEB)
    call_command("load_scenario", "seed-example", "--if-empty")
    assert DesiredLRP.objects.filter(process_guid="web").exists()
