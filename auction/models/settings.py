"""The live simulator's auctioneer settings: one row, read at every auction."""

from __future__ import annotations

from django.db import models

from auction.engine import STRATEGIES, AuctionConfig


class AuctionSettings(models.Model):
    """What ``AuctionConfig`` the auctioneer runs with (auction.md 2.1, 4.1, 4.4, 8).

    A scenario load writes its ``auction`` block here (the defaults for what it leaves
    out); the admin, the dashboard's controls and ``manage.py diego auction`` change it
    through ``services.auction_settings``. The seed is the clock's (the scenario's).
    """

    placement_strategy = models.CharField(
        max_length=16, default="diego", choices=[(s, s) for s in STRATEGIES])
    starting_container_weight = models.FloatField(default=0.25)
    bin_pack_first_fit_weight = models.FloatField(default=0.0)
    starting_container_count_maximum = models.IntegerField(
        "in-flight start cap", default=0, help_text="0 or less: no cap (auction.md 4.1).")
    locality_offset = models.IntegerField(default=1000)
    go_compat = models.BooleanField(
        "Go-compatibility mode", default=False,
        help_text="Order the batch and each zone's cells exactly as the real Diego binary "
                  "does: tasks first in an all-index-0 batch, Go's unstable sort "
                  "(auction.md 2.1). Off: the documented, stable order.")

    class Meta:
        verbose_name = "auction settings"
        verbose_name_plural = "auction settings"

    def __str__(self) -> str:
        order = "Go order" if self.go_compat else "spec order"
        return f"auction settings ({self.placement_strategy}, {order})"

    def config(self, seed: int = 0) -> AuctionConfig:
        return AuctionConfig(
            starting_container_weight=self.starting_container_weight,
            bin_pack_first_fit_weight=self.bin_pack_first_fit_weight,
            starting_container_count_maximum=self.starting_container_count_maximum,
            locality_offset=self.locality_offset,
            placement_strategy=self.placement_strategy, seed=seed, go_compat=self.go_compat)
