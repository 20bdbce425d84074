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
