"""One-off tasks (bbs.md 7)."""

from __future__ import annotations

from django.db import models

from auction.bbs.validation import FieldError, task_errors
from auction.models.cluster import raise_field_errors
from auction.models.fields import StringListField


class Task(models.Model):
    """A task and its definition; times are sim seconds (the API shows nanoseconds)."""

    class State(models.TextChoices):
        PENDING = "PENDING"
        RUNNING = "RUNNING"
        COMPLETED = "COMPLETED"
        RESOLVING = "RESOLVING"

    class PlacementMode(models.TextChoices):
        DIEGO = "diego", "Diego auction"
        OTTO = "otto", "Otto open auction"

    task_guid = models.CharField(max_length=255, unique=True, blank=True)
    domain = models.CharField(max_length=255, blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    cell_id = models.CharField(max_length=64, blank=True, default="", db_index=True)
    created_at = models.FloatField(default=0.0)
    updated_at = models.FloatField(default=0.0)
    first_completed_at = models.FloatField(null=True, blank=True)
    failed = models.BooleanField(default=False)
    failure_reason = models.TextField(blank=True, default="")
    result = models.TextField(blank=True, default="")
    rejection_count = models.IntegerField(default=0)
    rejection_reason = models.TextField(blank=True, default="")
    completion_callback_url = models.URLField(blank=True, default="")
    # The definition.
    rootfs = models.CharField(max_length=1024, default="preloaded:cflinuxfs4", blank=True)
    memory_mb = models.IntegerField("memory (MB)", default=256)
    disk_mb = models.IntegerField("disk (MB)", default=1024)
    max_pids = models.IntegerField(default=0)
    placement_tags = StringListField()
    volume_drivers = StringListField()
    annotation = models.TextField(blank=True, default="")
    # Simulation: how long the task runs once started (sim seconds).
    duration_s = models.FloatField("run time (sim s)", default=60.0)
    placement_mode = models.CharField(
        max_length=8, choices=PlacementMode.choices, default=PlacementMode.DIEGO
    )
    # The simulated rep: when a RUNNING task completes.
    finishes_at = models.FloatField(null=True, blank=True, editable=False)
    # The callback worker's bookkeeping (bbs.md 7.1, [project rule]): POSTs made so far,
    # never more than CALLBACK_ATTEMPTS in the task's life, and until when (wall epoch
    # seconds) one attempt is in flight, so a second copy of the message does not POST too.
    callback_attempts = models.IntegerField(default=0, editable=False)
    callback_busy_until = models.FloatField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["created_at", "task_guid"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(memory_mb__gte=0), name="task_memory_nonnegative",
                violation_error_message="Invalid field: memory_mb",
            ),
            models.CheckConstraint(
                condition=models.Q(disk_mb__gte=0), name="task_disk_nonnegative",
                violation_error_message="Invalid field: disk_mb",
            ),
            models.CheckConstraint(
                condition=models.Q(max_pids__gte=0), name="task_max_pids_nonnegative",
                violation_error_message="Invalid field: max_pids",
            ),
            models.CheckConstraint(
                condition=models.Q(state__in=["PENDING", "RUNNING", "COMPLETED", "RESOLVING"]),
                name="task_state_valid", violation_error_message="Invalid field: state",
            ),
        ]
        indexes = [models.Index(fields=["state"], name="task_state")]

    def __str__(self) -> str:
        return self.task_guid

    def bbs_errors(self) -> list[FieldError]:
        """Every failed check, in the BBS's order (bbs.md 7), plus the run time's range."""
        errors = task_errors(
            task_guid=self.task_guid, domain=self.domain, rootfs=self.rootfs,
            memory_mb=self.memory_mb, disk_mb=self.disk_mb, max_pids=self.max_pids,
            annotation=self.annotation, duration_s=self.duration_s,
        )
        return errors

    def clean(self) -> None:
        raise_field_errors(self.bbs_errors())
