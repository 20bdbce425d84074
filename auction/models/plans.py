"""What-if plans (plans.md 1): what was asked, how far the run is, what it predicts."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Plan(models.Model):
    """One plan: changes against a base, run forward in memory beside the baseline.

    It never changes the live cluster; ``applied_at`` is set when an operator applied its
    changes to the live cluster (the services' own actions, audited).
    """

    class Status(models.TextChoices):
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    base = models.CharField(max_length=128, default="live")
    # The named foundation's version the run read ("v2 sha256:..."), "" for the live cluster.
    base_version = models.CharField(max_length=64, blank=True, default="")
    changes = models.JSONField(default=list)
    horizon_s = models.FloatField(default=600.0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    progress = models.FloatField(default=0.0, help_text="0 to 1, while running.")
    cancel_requested = models.BooleanField(default=False)
    error = models.TextField(blank=True, default="")
    base_now = models.FloatField(null=True, blank=True, help_text="Sim seconds of the base.")
    result = models.JSONField(null=True, blank=True)
    report = models.TextField(blank=True, default="", help_text="The report card (HTML), when kept.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    applied_at = models.DateTimeField(null=True, blank=True)
    applied_sim = models.FloatField(null=True, blank=True, help_text="Sim seconds when applied.")
    applied_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"plan {self.pk} on {self.base} ({self.status})"

    @property
    def moved_on_s(self) -> float:
        """Sim seconds the live cluster ran between the plan's base and its apply (plans.md
        1.6): the prediction was computed from the cluster as it was at ``base_now``."""
        if self.applied_sim is None or self.base_now is None:
            return 0.0
        return max(0.0, self.applied_sim - self.base_now)


class PlanAuction(models.Model):
    """One auction a plan's run made, kept for replay like a live one (plans.md 1.7).

    ``record`` holds the fields of an ``AuctionRun`` (``auction.sim.replay_record``), so
    the one replay view reads it; ``number`` is its place among the plan's auctions (the
    result's ``auctions`` list, from 1). Only the first few are kept, within a byte budget.
    """

    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="auctions")
    number = models.IntegerField()
    started_at = models.FloatField(help_text="Sim seconds at the state fetch.")
    record = models.JSONField()

    class Meta:
        ordering = ["plan", "number"]
        constraints = [models.UniqueConstraint(fields=["plan", "number"], name="plan_auction_number")]

    def __str__(self) -> str:
        return f"plan {self.plan_id} auction {self.number}"


class ZoneLossAnswer(models.Model):
    """The last N-1 answer per base (plans.md 2.2), with the fingerprint of the world it
    answers for; kept in the database so every web process and the worker share it.

    ``computing_since`` is set while the worker works one out: one computation at a time.
    """

    base = models.CharField(max_length=128, unique=True)
    fingerprint = models.CharField(max_length=64, blank=True, default="")
    answer = models.JSONField(null=True, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    computing_since = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"zone loss of {self.base}"
