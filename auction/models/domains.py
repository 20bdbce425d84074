"""Domains and their freshness (bbs.md 5)."""

from __future__ import annotations

from django.db import models

from auction.bbs.validation import domain_errors
from auction.models.cluster import raise_field_errors


class Domain(models.Model):
    """A client's promise that its desired state is complete until ``expires_at``.

    Without that promise convergence destroys nothing (bbs.md 4.4): extras and orphans
    are retired only while their domain is fresh.
    """

    name = models.CharField(max_length=255, unique=True, blank=True)
    # Sim seconds; None = never expires (an upsert with ttl 0).
    expires_at = models.FloatField(null=True, blank=True, help_text="Sim seconds; empty = never.")
    ttl_s = models.FloatField("TTL (s)", default=120.0, help_text="0 = never expires.")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def is_fresh(self, now: float) -> bool:
        """Fresh at t ⇔ expiry > t (strict, bbs.md 5)."""
        return self.expires_at is None or self.expires_at > now

    def clean(self) -> None:
        raise_field_errors(domain_errors(domain=self.name, ttl=self.ttl_s),
                           fields={"domain": "name", "ttl": "ttl_s"})
