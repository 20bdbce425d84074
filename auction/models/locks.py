"""The cluster locks' rows on SQLite (auction/services/locks.py, ``database_lock``)."""

from __future__ import annotations

from django.db import models


class ClusterLock(models.Model):
    """Who holds a cluster lock, until when: the one auctioneer per database (auction.md
    1 step 2) on SQLite, which has no advisory locks. PostgreSQL holds the same lock as a
    session advisory lock and never writes here."""

    name = models.CharField(max_length=100, primary_key=True)
    holder = models.CharField(max_length=64, blank=True, default="")
    expires_at = models.FloatField(default=0.0, help_text="Unix seconds; the holder renews it.")

    def __str__(self) -> str:
        return f"lock {self.name}"
