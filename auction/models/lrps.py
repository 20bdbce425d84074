"""Desired and actual LRPs (bbs.md 1 and 2)."""

from __future__ import annotations

import uuid
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from auction.bbs.validation import FieldError, desired_lrp_errors, simulation_errors
from auction.models.cluster import raise_field_errors
from auction.models.fields import StringListField

# Members a DesiredLRPUpdateRequest may change; the rest need a new DesiredLRP (bbs.md 1.3).
IMMUTABLE_DESIRED_FIELDS = (
    "process_guid", "domain", "rootfs", "memory_mb", "disk_mb", "max_pids",
    "placement_tags", "volume_drivers", "ports", "start_timeout_ms",
)


def new_epoch() -> str:
    return uuid.uuid4().hex


class DesiredLRP(models.Model):
    """The consumer's intent: run ``instances`` copies of a process (bbs.md 1.1)."""

    process_guid = models.CharField(max_length=255, unique=True, blank=True)
    domain = models.CharField(max_length=255, blank=True)
    rootfs = models.CharField(max_length=1024, default="preloaded:cflinuxfs4", blank=True)
    instances = models.IntegerField(default=1)
    memory_mb = models.IntegerField("memory (MB)", default=256)
    disk_mb = models.IntegerField("disk (MB)", default=1024)
    max_pids = models.IntegerField(default=0, help_text="0 = unlimited.")
    placement_tags = StringListField()
    volume_drivers = StringListField()
    routes = models.JSONField(default=dict, blank=True, help_text="Router name → opaque JSON.")
    annotation = models.TextField(blank=True, default="")
    ports = models.JSONField(default=list, blank=True, help_text="Container ports, e.g. [8080].")
    start_timeout_ms = models.IntegerField(default=60_000)
    # 64: a real BBS epoch is a 36-character UUID (the cfdot reference), the simulator's 32 hex.
    modification_tag_epoch = models.CharField(max_length=64, default=new_epoch, editable=False)
    modification_tag_index = models.IntegerField(default=0, editable=False)
    # Simulated behaviour, beside the definition (bbs.md 1.1): how long a claimed
    # instance takes to become RUNNING, and how often a start ends in a crash.
    start_delay_s = models.FloatField("start delay (sim s)", default=3.0)
    crash_probability = models.FloatField(
        default=0.0, help_text="Chance (0-1) that a start crashes after 'crash after'.")
    crash_after_s = models.FloatField("crash after (sim s)", default=10.0)

    class Meta:
        ordering = ["process_guid"]
        verbose_name = "desired LRP"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(instances__gte=0), name="desired_instances_nonnegative",
                violation_error_message="Invalid field: instances",
            ),
            models.CheckConstraint(
                condition=models.Q(memory_mb__gte=0), name="desired_memory_nonnegative",
                violation_error_message="Invalid field: memory_mb",
            ),
            models.CheckConstraint(
                condition=models.Q(disk_mb__gte=0), name="desired_disk_nonnegative",
                violation_error_message="Invalid field: disk_mb",
            ),
            models.CheckConstraint(
                condition=models.Q(max_pids__gte=0), name="desired_max_pids_nonnegative",
                violation_error_message="Invalid field: max_pids",
            ),
            models.CheckConstraint(
                condition=models.Q(crash_probability__gte=0) & models.Q(crash_probability__lte=1),
                name="desired_crash_probability_range",
                violation_error_message="Invalid field: crash_probability",
            ),
            models.CheckConstraint(
                condition=models.Q(start_delay_s__gte=0) & models.Q(crash_after_s__gte=0),
                name="desired_sim_times_nonnegative",
                violation_error_message="Invalid field: start_delay_s",
            ),
        ]

    def __str__(self) -> str:
        return self.process_guid

    @property
    def modification_tag(self) -> dict[str, Any]:
        return {"epoch": self.modification_tag_epoch, "index": self.modification_tag_index}

    def bbs_errors(self) -> list[FieldError]:
        """Every failed check, in the BBS's order (bbs.md 1.2), plus the simulator's knobs."""
        return desired_lrp_errors(
            process_guid=self.process_guid, domain=self.domain, rootfs=self.rootfs,
            instances=self.instances, memory_mb=self.memory_mb, disk_mb=self.disk_mb,
            max_pids=self.max_pids, annotation=self.annotation, routes=self.routes,
            ports=self.ports, start_timeout_ms=self.start_timeout_ms,
        ) + simulation_errors(start_delay_s=self.start_delay_s,
                              crash_probability=self.crash_probability,
                              crash_after_s=self.crash_after_s)

    def clean(self) -> None:
        raise_field_errors(self.bbs_errors())
        if self.pk is not None:
            self._refuse_immutable_changes()

    def _refuse_immutable_changes(self) -> None:
        stored = DesiredLRP.objects.filter(pk=self.pk).values(*IMMUTABLE_DESIRED_FIELDS).first()
        if stored is None:
            return
        changed = {
            name: f"Invalid field: {name} (only instances, routes and annotation can change; "
            "desire a new LRP for the rest)"
            for name in IMMUTABLE_DESIRED_FIELDS
            if stored[name] != getattr(self, name)
        }
        if changed:
            raise ValidationError(changed)


class ActualLRP(models.Model):
    """One instance row, keyed by (process_guid, index, presence) (bbs.md 2.1)."""

    class State(models.TextChoices):
        UNCLAIMED = "UNCLAIMED"
        CLAIMED = "CLAIMED"
        RUNNING = "RUNNING"
        CRASHED = "CRASHED"

    class Presence(models.TextChoices):
        ORDINARY = "ORDINARY"
        EVACUATING = "EVACUATING"
        SUSPECT = "SUSPECT"

    # The column is the process guid. No database constraint: an orphaned instance
    # outlives its DesiredLRP until convergence retires it (bbs.md 4.2 step 4), yet the
    # admin can still list a desired LRP's instances inline.
    desired = models.ForeignKey(
        DesiredLRP,
        to_field="process_guid",
        db_column="process_guid",
        db_constraint=False,
        on_delete=models.DO_NOTHING,
        related_name="actual_lrps",
        verbose_name="process guid",
        # The key's unique index (process guid first) serves every lookup by guid; one
        # more index (two on PostgreSQL, with its LIKE twin) was written on every row write.
        db_index=False,
    )
    index = models.IntegerField()
    presence = models.CharField(max_length=16, choices=Presence.choices, default=Presence.ORDINARY)
    state = models.CharField(max_length=16, choices=State.choices, default=State.UNCLAIMED)
    domain = models.CharField(max_length=255)
    instance_guid = models.CharField(max_length=64, blank=True, default="")
    cell_id = models.CharField(max_length=64, blank=True, default="")  # indexed in Meta
    address = models.CharField(max_length=64, blank=True, default="")
    ports = models.JSONField(default=list, blank=True)
    placement_error = models.TextField(blank=True, default="")
    since = models.FloatField(default=0.0, help_text="Sim seconds of the last state change.")
    crash_count = models.IntegerField(default=0)
    crash_reason = models.TextField(blank=True, default="")
    modification_tag_epoch = models.CharField(max_length=64, default=new_epoch)
    modification_tag_index = models.IntegerField(default=0)
    # The simulated rep: when a CLAIMED instance becomes RUNNING, and when a RUNNING
    # one crashes (injected). Not part of Diego's record.
    ready_at = models.FloatField(null=True, blank=True)
    crash_at = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["desired_id", "index", "presence"]
        verbose_name = "actual LRP"
        constraints = [
            models.UniqueConstraint(
                fields=["desired", "index", "presence"], name="actual_lrp_key",
                violation_error_message="the requested resource already exists",
            ),
            models.CheckConstraint(
                condition=models.Q(index__gte=0), name="actual_index_nonnegative",
                violation_error_message="Invalid field: index",
            ),
            models.CheckConstraint(
                condition=models.Q(state__in=["UNCLAIMED", "CLAIMED", "RUNNING", "CRASHED"]),
                name="actual_state_valid", violation_error_message="Invalid field: state",
            ),
            models.CheckConstraint(
                condition=models.Q(presence__in=["ORDINARY", "EVACUATING", "SUSPECT"]),
                name="actual_presence_valid", violation_error_message="Invalid field: presence",
            ),
        ]
        # cell_id's index is declared here, not with db_index: PostgreSQL would add a LIKE
        # twin (varchar_pattern_ops) that no query uses and every row write updates.
        indexes = [models.Index(fields=["state", "presence"], name="actual_state_presence"),
                   models.Index(fields=["cell_id"], name="actual_cell")]

    @property
    def process_guid(self) -> str:
        return self.desired_id

    @property
    def key(self) -> str:
        return f"{self.desired_id}.{self.index}"

    def __str__(self) -> str:
        suffix = "" if self.presence == self.Presence.ORDINARY else f" ({self.presence})"
        return f"{self.key}{suffix} {self.state}"
