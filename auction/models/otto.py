"""Otto open auctions (otto.md): the rows that hold the truth; the channels only notify."""

from __future__ import annotations

from django.db import models

from auction.otto.bids import roster_live


class OttoAuction(models.Model):
    """One task's auction across its attempts (otto.md 6); the board and late joiners read it."""

    class State(models.TextChoices):
        OPEN = "open"
        NO_BIDS = "no_bids", "no bids (back-off)"
        AWARDED = "awarded"
        STARTED = "started"
        FINISHED = "finished"
        FAILED = "failed"

    auction_id = models.CharField(max_length=64, unique=True)
    task_guid = models.CharField(max_length=255, db_index=True)
    raw = models.JSONField(default=dict, help_text="The Diego task definition.")
    capabilities = models.JSONField(default=dict)
    state = models.CharField(max_length=16, choices=State.choices, default=State.OPEN, db_index=True)
    attempt = models.IntegerField(default=1)
    announcements = models.IntegerField(default=1)
    duration_s = models.FloatField(default=5.0)
    submitted_at = models.FloatField(help_text="Sim seconds.")
    starts = models.FloatField()
    ends = models.FloatField()
    closed_at = models.FloatField(null=True, blank=True)
    next_announce_at = models.FloatField(null=True, blank=True)
    winner = models.CharField(max_length=40, blank=True, default="")
    cost = models.FloatField(null=True, blank=True)
    start_by = models.FloatField(null=True, blank=True)
    started_at = models.FloatField(null=True, blank=True)
    started_cell = models.CharField(max_length=64, blank=True, default="")
    finished_at = models.FloatField(null=True, blank=True)
    excluded = models.JSONField(default=list, help_text="Left out of this attempt's first announcement.")
    unmet = models.JSONField(default=list, help_text="Capabilities no live orchestrator offers.")
    failure_reason = models.TextField(blank=True, default="")
    note = models.TextField(blank=True, default="")
    history = models.JSONField(default=list, help_text="[sim time, text] of every transition.")
    # Wall clock of the award, to measure award latency after the close (bench.otto).
    awarded_wall = models.FloatField(null=True, blank=True)
    award_latency_ms = models.FloatField(null=True, blank=True, help_text="Award sent after the close instant.")
    updated_wall = models.FloatField(default=0.0)

    class Meta:
        ordering = ["-id"]
        verbose_name = "Otto auction"
        indexes = [models.Index(fields=["state", "ends"], name="otto_auction_state_ends")]

    def __str__(self) -> str:
        return f"{self.auction_id} ({self.task_guid}, attempt {self.attempt}, {self.state})"


class OttoBid(models.Model):
    """A bid as the auctioneer received it; refused ones are kept with their reason (otto.md 6)."""

    class Status(models.TextChoices):
        ACCEPTED = "accepted"
        LATE = "late"
        INVALID = "invalid"
        DECLINED = "declined"

    auction = models.ForeignKey(OttoAuction, on_delete=models.CASCADE, related_name="bids")
    attempt = models.IntegerField()
    bidder = models.CharField(max_length=40)
    kind = models.CharField(max_length=16, default="agent")
    cost = models.FloatField(default=0.0)
    breakdown = models.JSONField(default=dict)
    ready_in_s = models.FloatField(default=0.0)
    sent_at = models.FloatField(null=True, blank=True, help_text="The bidder's own clock (informational).")
    received_at = models.FloatField(help_text="The auctioneer's sim clock at arrival.")
    sequence = models.BigIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACCEPTED)
    reason = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["auction_id", "attempt", "received_at", "sequence"]
        verbose_name = "Otto bid"
        constraints = [
            models.UniqueConstraint(fields=["auction", "attempt", "bidder"], name="otto_bid_once_per_attempt"),
        ]

    def __str__(self) -> str:
        return f"{self.bidder} {self.cost:.6f} on {self.auction_id}#{self.attempt} ({self.status})"

    @property
    def skew_s(self) -> float | None:
        return None if self.sent_at is None else round(self.sent_at - self.received_at, 3)


class OttoOrchestrator(models.Model):
    """A roster row (otto.md 1, dashboard O5): refreshed every 5 s, live for 15 s."""

    class Kind(models.TextChoices):
        AGENT = "agent"
        STANDALONE = "standalone"

    client_id = models.CharField(max_length=40, unique=True)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.AGENT)
    cell_id = models.CharField(max_length=64, blank=True, default="")
    enabled = models.BooleanField(default=True)
    capabilities = models.JSONField(default=dict)
    rate_per_hour = models.FloatField(default=0.10)
    speed = models.FloatField(default=1.0)
    load = models.FloatField(default=0.0)
    # Seeded demo knobs: bid_latency_s, bid_timing, start_failure_rate, clock_offset_s,
    # max_cells and provision_s for the elastic one.
    knobs = models.JSONField(default=dict)
    alive_until_wall = models.FloatField(default=0.0)
    wins = models.IntegerField(default=0)
    start_timeouts = models.IntegerField(default=0)
    declines = models.IntegerField(default=0)
    provisioned = models.IntegerField(default=0)

    class Meta:
        ordering = ["kind", "client_id"]
        verbose_name = "Otto orchestrator"

    def __str__(self) -> str:
        return self.client_id

    def is_live(self, wall: float) -> bool:
        return roster_live(self.enabled, self.alive_until_wall, wall)


class OttoTaskCapabilities(models.Model):
    """Capabilities a submitter asked for beyond what ``raw`` implies (otto.md 3), per task."""

    task_guid = models.CharField(max_length=255, unique=True)
    capabilities = models.JSONField(default=dict)

    class Meta:
        verbose_name = "Otto task capabilities"
        verbose_name_plural = "Otto task capabilities"

    def __str__(self) -> str:
        return f"{self.task_guid}: {self.capabilities}"


class OttoMarket(models.Model):
    """The market's settings for the loaded scenario (one row): the auction duration."""

    duration_s = models.FloatField("auction duration (sim s)", default=5.0)

    class Meta:
        verbose_name = "Otto market"

    def __str__(self) -> str:
        return f"Otto market ({self.duration_s:g} s auctions)"
