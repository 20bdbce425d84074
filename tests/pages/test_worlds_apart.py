"""Numbers of one world (dashboard.md M1, A1): a scenario load starts the metric tiles and
counters again, and the auction list says which world each auction ran in."""

from __future__ import annotations

import pytest

from auction.models import AuctionRun, ConvergenceRun, Counter
from auction.selectors.auctions import auction_list
from auction.selectors.clock import world_epoch
from auction.selectors.metrics import metrics_header
from auction.services.clock import clock_reset
from auction.services.scenarios import scenario_load
from auction.services.sim import sim_advance

pytestmark = pytest.mark.django_db


def tiles() -> dict[str, str]:
    return {m.name: m.text for m in metrics_header()}


def test_a_load_starts_the_metrics_again_and_the_list_names_each_world() -> None:
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    sim_advance(now=40.0)  # auctions and a pass in the first world
    first = world_epoch()
    assert ConvergenceRun.objects.filter(world_epoch=first).exists()
    assert tiles()["PresentCells"] not in ("—", "")
    assert Counter.objects.exists()
    scenario_load("seed-example")  # another world: its sim time restarts at 0
    clock_reset(0.0, paused=True)
    assert world_epoch() != first
    shown = tiles()
    assert shown["PresentCells"] == "—" and shown["ConvergenceLRPRuns"] == "—"
    assert shown["AuctioneerLRPAuctionsStarted"] == "—"
    assert not Counter.objects.exists()
    assert "(since this world was loaded)" in {m.name: m.tooltip for m in metrics_header()}["ConvergenceLRPRuns"]
    listed = auction_list()
    assert listed and all(a["world"] == f"earlier ({first})" for a in listed)
    sim_advance(now=40.0)
    newest = auction_list()[0]
    assert newest["world"] == "this" and AuctionRun.objects.get(pk=newest["pk"]).world_epoch == world_epoch()
