"""The simulated rep's bookkeeping agrees with the engine's commit on a proxy cell
(auction.md 7.3 and 1.8; the loads of auction.sim.loads)."""

from __future__ import annotations

from auction.bbs import types as core
from auction.sim.memory import SimApp, SimCell, World


def test_third_0_mb_lrp_refused_then_placed_by_the_next_auction_auction_md_7_3() -> None:
    """auction.md 7.3 and 1.8: 64 MB free, proxy 32: the commit refuses the third 0 MB LRP
    (the proxy of the first two counts against the LRPs after them), but their containers
    take 0 MB, so the cell still reports 64 MB free and the next auction places the third
    (each commit starts from the cell's real free memory)."""
    world = World(seed=1)
    world.add_cell(SimCell("c1", "z1", 0, memory_mb=64, disk_mb=1000, containers=10,
                           proxy_memory_mb=32))
    world.upsert_domain("cf-apps", 0)
    for guid in ("za", "zb", "zc"):
        world.desire_lrp(SimApp(guid, instances=1, memory_mb=0, disk_mb=10))
    world.run_until(1)
    (first,) = world.auctions
    assert first.placed == {"za.0": "c1", "zb.0": "c1"} and first.failures == {"zc.0": ""}
    (state,) = world.cell_states()
    assert (state.available.memory_mb, state.available.containers) == (64, 8)
    world.run_until(120)
    assert [a.placed for a in world.auctions[1:]] == [{"zc.0": "c1"}]
    assert {r.process_guid: r.cell_id for r in world.rows.values()} == {
        "za": "c1", "zb": "c1", "zc": "c1"}
    assert {r.state for r in world.rows.values()} == {core.RUNNING}
    (state,) = world.cell_states()
    assert (state.available.memory_mb, state.available.containers) == (64, 7)
