"""The auctioneer's durable queue of start requests (auction.md 1, steps 1 and 4)."""

from __future__ import annotations

from django.db import models


class PendingWork(models.Model):
    """One LRP instance or task waiting for an auction.

    Rows are written in the same transaction as the start request that caused them and
    deleted in the same transaction as the auction that placed them, so a worker killed
    mid-auction loses nothing: the rows are still here for the next one.
    """

    class Kind(models.TextChoices):
        LRP = "lrp"
        TASK = "task"

    kind = models.CharField(max_length=4, choices=Kind.choices)
    # "<process_guid>.<index>" or the task guid: the batch de-duplicates on it.
    ident = models.CharField(max_length=300)
    process_guid = models.CharField(max_length=255, blank=True, default="")
    index = models.IntegerField(null=True, blank=True)
    task_guid = models.CharField(max_length=255, blank=True, default="")
    queued_at = models.FloatField(help_text="Sim seconds when first queued (kept across carry-over).")
    # Carried over from a previous auction: first in the next batch, in that batch's
    # order, and unable to start an auction by itself (auction.md 1 step 8).
    carried = models.BooleanField(default=False)
    batch_position = models.IntegerField(default=0)
    attempts = models.IntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    reason = models.CharField(max_length=32, blank=True, default="", help_text="Who asked: desire, converge, crash, evacuation…")

    class Meta:
        ordering = ["-carried", "batch_position", "id"]
        indexes = [models.Index(fields=["carried"], name="pending_carried")]

    def __str__(self) -> str:
        return f"{self.ident} ({'carried' if self.carried else 'new'})"
