"""The auctioneer's settings as the auctioneer and the pages read them (never writes)."""

from __future__ import annotations

from auction.engine import AuctionConfig
from auction.models import AuctionSettings, SimClock


def auction_settings() -> AuctionSettings:
    """The stored settings, or the defaults when none were ever saved."""
    return AuctionSettings.objects.filter(pk=1).first() or AuctionSettings(pk=1)


def auction_settings_config() -> AuctionConfig:
    """The auctioneer's ``AuctionConfig``, seeded with the clock's (the scenario's) seed."""
    seed = SimClock.objects.filter(pk=1).values_list("seed", flat=True).first() or 0
    return auction_settings().config(seed)
