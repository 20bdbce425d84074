"""Model-level validation (bbs.md 1.2, 2.1, 7) through Django's full_clean and the database."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from auction.models import ActualLRP, Cell, DesiredLRP, Domain, SimClock, Task, Zone

pytestmark = pytest.mark.django_db


def errors_of(obj: object) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as info:
        obj.full_clean()  # type: ignore[attr-defined]
    return info.value.message_dict


def test_desired_lrp_full_clean_uses_bbs_messages() -> None:
    """bbs.md 1.2: each failed check's text lands on its field, duplicates kept."""
    lrp = DesiredLRP(process_guid="bad guid", domain="", rootfs="", instances=-1, memory_mb=-5,
                     disk_mb=-1, max_pids=-1, annotation="x" * 10_241)
    errors = errors_of(lrp)
    assert errors["domain"] == ["Invalid field: domain", "Invalid field: domain"]
    assert errors["rootfs"] == ["Invalid field: rootfs", "Invalid field: rootfs"]
    assert errors["instances"] == ["Invalid field: instances"]
    assert errors["memory_mb"] == ["Invalid field: memory_mb"]
    assert errors["disk_mb"] == ["Invalid field: disk_mb"]
    assert errors["max_pids"] == ["Invalid field: max_pids"]
    assert errors["annotation"] == ["Invalid field: annotation"]
    assert errors["process_guid"] == ["Invalid field: process_guid"]


def test_desired_lrp_good_values_save() -> None:
    """bbs.md 1.1: instances 0 is valid; the modification tag starts at index 0."""
    lrp = DesiredLRP(process_guid="web", domain="cf-apps", instances=0)
    lrp.full_clean()
    lrp.save()
    assert lrp.modification_tag["index"] == 0 and len(lrp.modification_tag["epoch"]) == 32


def test_desired_lrp_only_updatable_fields_change() -> None:
    """bbs.md 1.3: changes that need a restart require a new DesiredLRP."""
    lrp = DesiredLRP.objects.create(process_guid="web", domain="cf-apps")
    lrp.instances, lrp.annotation = 5, "ok"
    lrp.full_clean()
    lrp.memory_mb = 4096
    assert "memory_mb" in errors_of(lrp)


def test_database_refuses_negative_instances() -> None:
    """bbs.md 1.1: the range rule holds even for writes that skip full_clean."""
    with pytest.raises(IntegrityError), transaction.atomic():
        DesiredLRP.objects.create(process_guid="web", domain="cf-apps", instances=-1)


def test_actual_lrp_key_is_unique_per_presence() -> None:
    """bbs.md 2.1: key (process_guid, index, presence); three rows at most per index."""
    for presence in ("ORDINARY", "SUSPECT", "EVACUATING"):
        ActualLRP.objects.create(desired_id="web", index=0, presence=presence, domain="d")
    with pytest.raises(IntegrityError), transaction.atomic():
        ActualLRP.objects.create(desired_id="web", index=0, presence="ORDINARY", domain="d")


def test_actual_lrp_states_and_presences_are_checked() -> None:
    """bbs.md 2.1: only the four states and three presences exist."""
    bad = ActualLRP(desired_id="web", index=0, domain="d", state="STARTING", presence="GHOST")
    errors = errors_of(bad)
    assert "state" in errors and "presence" in errors
    with pytest.raises(IntegrityError), transaction.atomic():
        ActualLRP.objects.create(desired_id="web", index=0, domain="d", state="STARTING")


def test_orphaned_actual_lrp_outlives_its_desired_lrp() -> None:
    """bbs.md 4.2 step 4: an orphan stays until convergence retires it."""
    lrp = DesiredLRP.objects.create(process_guid="web", domain="cf-apps")
    ActualLRP.objects.create(desired=lrp, index=0, domain="cf-apps")
    lrp.delete()
    assert ActualLRP.objects.filter(desired_id="web").count() == 1


def test_task_validation_and_states() -> None:
    """bbs.md 7: messages in order; the four task states."""
    errors = errors_of(Task(task_guid="a b", domain="", rootfs="", memory_mb=-1, duration_s=-1))
    assert errors["task_guid"] == ["Invalid field: task_guid"]
    assert errors["rootfs"] == ["Invalid field: rootfs"]
    assert errors["memory_mb"] == ["Invalid field: memory_mb"]
    assert errors["duration_s"] == ["Invalid field: duration_s"]
    with pytest.raises(IntegrityError), transaction.atomic():
        Task.objects.create(task_guid="t", domain="d", state="DONE")


def test_cell_capacity_at_least_one() -> None:
    """auction.md 3: cell totals are at least 1 in every dimension (dashboard.md AD2)."""
    zone = Zone.objects.create(name="z1")
    errors = errors_of(Cell(cell_id="cell 1", zone=zone, memory_mb=0, disk_mb=0, containers=0,
                            index=-1, proxy_memory_mb=-1))
    for field in ("cell_id", "memory_mb", "disk_mb", "containers", "index", "proxy_memory_mb"):
        assert errors[field] == [f"Invalid field: {field}"], field
    cell = Cell(cell_id="cell-1", zone=zone)
    cell.full_clean()
    assert cell.preloaded_rootfses == ["cflinuxfs4"] and cell.rootfs_providers == ["docker"]
    assert cell.state == "healthy"


def test_domain_freshness_is_strict() -> None:
    """bbs.md 5: fresh at t ⇔ expiry > t; no expiry never goes stale."""
    domain = Domain(name="cf-apps", expires_at=100.0)
    assert domain.is_fresh(99.9) and not domain.is_fresh(100.0)
    assert Domain(name="forever", expires_at=None).is_fresh(1e12)
    assert errors_of(Domain(name="", ttl_s=-1)) == {"name": ["Invalid field: domain"],
                                                    "ttl_s": ["Invalid field: ttl"]}


def test_clock_speed_range_is_validated() -> None:
    """The simulated clock runs from 0.25x to 100x (issue: BBS loop, dashboard.md C1)."""
    assert "__all__" in errors_of(SimClock(speed=500))
    SimClock(speed=100).full_clean()
