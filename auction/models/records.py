"""What happened: auctions, convergence passes, BBS events, audit entries, counters."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class AuctionRun(models.Model):
    """One auction, recorded for replay (dashboard.md section 2)."""

    started_at = models.FloatField(help_text="Sim seconds at the state fetch.")
    wall_started = models.FloatField(default=0.0, help_text="Unix seconds when the fetch began.")
    duration_ms = models.FloatField(default=0.0)
    fetch_ms = models.FloatField(default=0.0)
    trigger = models.CharField(max_length=64, blank=True, default="")
    strategy = models.CharField(max_length=16, default="diego")
    # Which order placed the work: the documented one, or the Go binary's (auction.md 2.1).
    go_compat = models.BooleanField(default=False)
    items = models.IntegerField(default=0)
    placed = models.IntegerField(default=0)
    failed = models.IntegerField(default=0)
    cells = models.JSONField(default=list, help_text="The fetched cell states (the replay's input).")
    order = models.JSONField(default=list)
    placements = models.JSONField(default=dict)
    failures = models.JSONField(default=dict)
    scores = models.JSONField(default=dict)
    carried_in = models.JSONField(default=dict, help_text="ident → attempts, for carried-over items.")
    commit = models.JSONField(default=dict, help_text="cell → accepted / rejected / unreachable.")
    explanations = models.JSONField(null=True, blank=True)
    quality = models.JSONField(default=dict)
    # The replay's strip and badges (dashboard.md A2, A3): ident → memory, kind, who asked,
    # the previous error of a carried item, the cell an orphan came from, evacuation.
    batch = models.JSONField(default=dict)
    # How much of the decision record is kept: the newest auctions keep every verdict,
    # older ones a summary per item (dashboard.md 2), big ones none.
    detail = models.CharField(max_length=8, default="full", help_text="full, summary or none")
    # A mass auction (more than RECORD_ITEMS_MAX items, bbs.md 8.1) keeps a bounded sample of
    # its items in order/failures/batch/carried_in and every failure counted here:
    # {"errors": {error: n}, "lrp": n, "task": n}; "sampled" is how many items it lists.
    # Every record also counts its placements: {"placed": {"lrp": n, "task": n}}.
    failure_counts = models.JSONField(default=dict, blank=True)
    sampled = models.IntegerField(default=0, help_text="0: every item recorded; else the sample size")
    # The world (SimClock.world_epoch) the auction ran in: a scenario or foundation load
    # starts another world, whose sim times restart at 0 (dashboard.md A1, M1).
    world_epoch = models.IntegerField(default=0)

    class Meta:
        ordering = ["-id"]
        verbose_name = "auction"

    def __str__(self) -> str:
        return f"auction #{self.pk} at {self.started_at:.1f}: {self.placed} placed, {self.failed} failed"

    @property
    def mode(self) -> str:
        """Strategy and order, as pages name them ("diego (Go order)", auction.md 2.1)."""
        return mode_label(self.strategy, self.go_compat)


def mode_label(strategy: str, go_compat: bool) -> str:
    return f"{strategy} (Go order)" if go_compat else strategy


class ConvergenceRun(models.Model):
    """One convergence pass: its action lists and the bbs.md 9 gauges it recorded."""

    at = models.FloatField(help_text="Sim seconds: the pass's now.")
    duration_ns = models.BigIntegerField(default=0)
    lrp = models.JSONField(default=dict)
    tasks = models.JSONField(default=dict)
    metrics = models.JSONField(default=dict)
    world_epoch = models.IntegerField(default=0, help_text="The world the pass ran in (dashboard.md M1).")

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"convergence at {self.at:.1f}"


class BBSEvent(models.Model):
    """The bounded event log (bbs.md 8), newest last; the feed and /events/ read it."""

    at = models.FloatField(help_text="Sim seconds.")
    type = models.CharField(max_length=64, db_index=True)
    key = models.CharField(max_length=300, blank=True, default="", db_index=True)
    cell_id = models.CharField(max_length=64, blank=True, default="")
    data = models.JSONField(default=dict)

    class Meta:
        ordering = ["-id"]
        verbose_name = "BBS event"

    def __str__(self) -> str:
        return f"{self.type} {self.key}"


class AuditEntry(models.Model):
    """Who changed what, from where (dashboard.md AD4, C2)."""

    wall = models.DateTimeField(auto_now_add=True)
    sim = models.FloatField(default=0.0)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    source = models.CharField(max_length=16, help_text="admin, api, dashboard, system")
    action = models.CharField(max_length=64)
    target = models.CharField(max_length=300, blank=True, default="")
    diff = models.JSONField(default=dict, help_text="field → [before, after]")

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.action} {self.target}"


class Counter(models.Model):
    """Running totals (ConvergenceLRPRuns, AuctioneerLRPAuctionsStarted, TasksStarted…)."""

    name = models.CharField(max_length=128, unique=True)
    value = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.name}={self.value}"
