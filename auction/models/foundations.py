"""A named foundation: a cfdot capture kept as a base for plans (plans.md 3.3)."""

from __future__ import annotations

from django.db import models


def foundation_label(version: int, sha256: str) -> str:
    return f"v{version} sha256:{sha256[:12]}" if sha256 else f"v{version}"


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
    # Which capture this is (plans.md 3.3): 1 when kept, one more at each replace; a plan
    # made from it names the version and the capture's hash it used.
    version = models.PositiveIntegerField(default=1)
    sha256 = models.CharField(max_length=64, blank=True, default="",
                              help_text="SHA-256 of the kept capture (hex).")
    size_bytes = models.BigIntegerField(default=0, help_text="The kept capture's size (gzip).")
    captured_at = models.DateTimeField(null=True, blank=True,
                                       help_text="The capture's newest time (none for a simulator's dump).")
    replaced_at = models.DateTimeField(null=True, blank=True)

    def label(self) -> str:
        """The version a plan names: ``v2 sha256:1a2b3c4d5e6f``."""
        return foundation_label(self.version, self.sha256)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
