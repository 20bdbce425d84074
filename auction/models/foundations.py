"""A named foundation: a cfdot capture kept as a base for plans (plans.md 3.3)."""

from __future__ import annotations

from django.db import models


class Foundation(models.Model):
    """One imported capture, as the canonical cfdot lines the importer read from it
    (gzip): what the simulator keeps of a foundation and nothing more, so no secret of
    the original files is in it (plans.md 3.1)."""

    name = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    capture = models.BinaryField(help_text="cfdot JSON Lines, gzip-compressed.")
    # The same cluster packed for a quick start (auction.sim.view_pack): a plan's base is
    # read from it in seconds, where the capture takes tens of seconds at 250,000 rows.
    snapshot = models.BinaryField(default=bytes, blank=True)
    summary = models.JSONField(default=dict, blank=True, help_text="Counts: cells, zones, LRPs, tasks...")
    assumptions = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
