"""The BBS and the auctioneer as real processes: bundled Redis, Celery workers and beat.

issue "BBS and auctioneer loop"; bbs.md 4, 6.2; auction.md 1 (one auction at a time,
durable work). The clock runs at 10x so 30 sim-s passes take 3 wall-s.
"""

from __future__ import annotations

import random
import time
from collections import Counter

import pytest
from stack import LiveStack

pytestmark = pytest.mark.processes


def running(status: dict, guid: str) -> list[dict]:
    return [a for a in status["actual_lrps"]
            if a["process_guid"] == guid and a["presence"] == "ORDINARY" and a["state"] == "RUNNING"]


@pytest.fixture
def stack():
    live = LiveStack("bbs")
    try:
        live.manage("bootstrap", "--url", live.url)
        live.start_redis()
        live.cli("clock", "--speed", "10")
        yield live
    finally:
        live.stop()


def zones_of(status: dict) -> dict[str, str]:
    return {c["cell_id"]: c["zone"] for c in status["cells"]}


def test_desire_three_instances_run_spread_over_zones(stack: LiveStack) -> None:
    """bbs.md 1.4 + auction.md 4.2: desire → auction → CLAIMED → RUNNING, zones balanced."""
    stack.start_worker()
    stack.start_beat()
    stack.cli("desire", "web", "--instances", "3", "--memory", "512")
    status = stack.wait_for(lambda s: len(running(s, "web")) == 3, what="3 RUNNING web")
    cells = [a["cell_id"] for a in running(status, "web")]
    assert len(set(cells)) == 3
    assert {zones_of(status)[c] for c in cells} == {"z1", "z2"}


def test_failed_cell_is_replaced_elsewhere_then_suspects_resolve(stack: LiveStack) -> None:
    """bbs.md 6.2: lost presence → SUSPECT + replacement → RUNNING elsewhere → suspect gone."""
    stack.start_worker()
    stack.start_beat()
    status = stack.wait_for(lambda s: len(running(s, "lrp-a")) == 3, what="seed running")
    victim = running(status, "lrp-a")[0]["cell_id"]
    on_victim = {(a["process_guid"], a["index"]) for a in status["actual_lrps"] if a["cell_id"] == victim}
    stack.cli("fail-cell", victim)

    def replaced(s: dict) -> bool:
        suspects_seen = any(p["lrp"]["suspect"] for p in s["passes"])
        rows = {(a["process_guid"], a["index"]): a for a in s["actual_lrps"] if a["presence"] == "ORDINARY"}
        return suspects_seen and not any(a["presence"] == "SUSPECT" for a in s["actual_lrps"]) and all(
            rows[k]["state"] == "RUNNING" and rows[k]["cell_id"] != victim for k in on_victim)

    status = stack.wait_for(replaced, timeout=90, what="replacements running, suspects resolved")
    suspected = {key for p in status["passes"] for key in p["lrp"]["suspect"]}
    assert suspected == {f"{g}.{i}" for g, i in on_victim}
    assert max(p["metrics"]["SuspectCells"] for p in status["passes"]) == 1


def test_two_workers_and_two_beats_never_overlap_or_double_place(stack: LiveStack) -> None:
    """auction.md 1 step 2: one auction at a time across all workers; nothing placed twice."""
    for n in (1, 2):
        stack.start_worker(f"worker{n}")
        stack.start_beat(f"beat{n}")
    for n in range(8):
        stack.cli("desire", f"app-{n}", "--instances", "4", "--memory", "128", "--disk", "64")
    status = stack.wait_for(
        lambda s: all(len(running(s, f"app-{n}")) == 4 for n in range(8)), timeout=90,
        what="32 instances RUNNING")
    runs = sorted(status["auction_runs"], key=lambda r: r["wall_started"])
    for earlier, later in zip(runs, runs[1:]):
        assert later["wall_started"] >= earlier["wall_started"] + earlier["duration_ms"] / 1000 - 0.002, \
            f"auctions {earlier['id']} and {later['id']} overlapped"
    placed = Counter(ident for r in runs for ident in r["placements"])
    assert [ident for ident, n in placed.items() if n > 1] == []
    # Each convergence instant ran once, however many beats ticked.
    instants = [p["at"] for p in status["passes"]]
    assert len(instants) == len(set(instants))


def test_killed_worker_loses_no_work(stack: LiveStack) -> None:
    """A worker SIGKILLed at random moments, auctions included, loses no start request."""
    stack.start_beat()
    worker = stack.start_worker("victim")
    rng = random.Random(7)
    for n in range(6):
        stack.cli("desire", f"bulk-{n}", "--instances", "40", "--memory", "16", "--disk", "16")
        time.sleep(rng.uniform(0.05, 0.4))
        stack.kill(worker)
        worker = stack.start_worker(f"victim{n}")
    status = stack.wait_for(
        lambda s: all(len(running(s, f"bulk-{n}")) == 40 for n in range(6)), timeout=120,
        what="240 instances RUNNING after the kills")
    ordinary = Counter((a["process_guid"], a["index"]) for a in status["actual_lrps"]
                       if a["presence"] == "ORDINARY")
    assert max(ordinary.values()) == 1
    assert status["pending_work"] == 0
