"""A live cluster cloned into memory runs forward as the live cluster does (plans.md 1.1).

The live cluster runs a scenario with timed chaos part of the way in the database, is
cloned through ``DbStore().cluster_view()`` and ``world_from_view``, and then both the
clone (in memory) and the live cluster (in the database, the shared driver) run a long
way further: the dumps are the same line for line, events included.
"""

from __future__ import annotations

import pytest

from auction.services.sim import simulate_in_database
from auction.services.store import DbStore
from auction.sim.base import world_from_view
from auction.sim.cfdot import ClusterView, dump_lines
from auction.sim.driver import advance
from auction.sim.scenario import world_from_scenario

pytestmark = pytest.mark.django_db


def first_difference(a: list[str], b: list[str]) -> str:
    for n, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"line {n}:\n clone {x[:400]}\n live  {y[:400]}"
    return f"lengths {len(a)} (clone) and {len(b)} (live)"


def clone_of_live():  # type: ignore[no-untyped-def]
    store = DbStore()
    return world_from_view(store.cluster_view(), store.auction_config(), seed=store.seed)


@pytest.mark.parametrize(("name", "cut"), [("az-loss", 75.0), ("seed-example", 40.0),
                                           ("boulders-pebbles", 12.5)])
def test_a_live_cluster_cloned_mid_run_runs_forward_as_the_live_cluster_plans_md_1_1(
        name: str, cut: float) -> None:
    """Cut mid-run (a zone down and lapsing in az-loss, work queued, timers pending),
    then 900 sim-s more on both sides: the same cells, rows, tasks, domains and events."""
    simulate_in_database(name, cut)
    clone = clone_of_live()
    assert clone.now == cut
    clone.run_until(cut + 900)
    store = DbStore(trigger_auctions=False)
    advance(store, cut + 900)
    live = list(dump_lines(store.cluster_view()))
    cloned = list(dump_lines(clone.cluster_view()))
    assert cloned == live, first_difference(cloned, live)
    assert len(clone.passes) >= 29  # every convergence pass of the 900 s ran in the clone


def test_the_clone_holds_what_the_live_cluster_holds_plans_md_1_1() -> None:
    """The clone's own view is the live view: queue, timer, steps not yet done, rows."""
    simulate_in_database("az-loss", 61.0)
    view = DbStore().cluster_view()
    assert view.timeline and view.timeline[0][2] == "zone_restore"
    clone = world_from_view(view, seed=3)
    again = clone.cluster_view()
    assert list(dump_lines(again)) == list(dump_lines(view))
    assert [q.ident for q in again.queue] == [q.ident for q in sorted(view.queue, key=lambda q: q.batch_key())]
    assert again.next_convergence_at == view.next_convergence_at
    assert [t[1:] for t in again.timeline] == [t[1:] for t in view.timeline]


def test_a_capture_without_a_queue_queues_its_unclaimed_work_plans_md_1_1() -> None:
    """A capture has no queue: the clone's auctioneer holds its UNCLAIMED rows and places them."""
    world = world_from_scenario("seed-example")
    view = world.cluster_view()
    assert any(r.state == "UNCLAIMED" for r in view.rows)
    capture = ClusterView(now=view.now, cells=view.cells, loads=view.loads, apps=view.apps,
                          rows=view.rows, tasks=view.tasks, domains=view.domains, events=())
    clone = world_from_view(capture)
    assert len(clone.queue) == sum(1 for r in view.rows if r.state == "UNCLAIMED") + sum(
        1 for t in view.tasks if t.task.state == "PENDING")
    clone.run_until(120)
    assert not any(r.state == "UNCLAIMED" for r in clone.rows.values())


def test_the_clones_queued_work_is_due_for_the_next_auction_plans_md_1_1() -> None:
    """Work the clone's auctioneer holds is due at once (the world's index of new work is
    kept), not at the next convergence pass or whatever else comes first."""
    world = world_from_scenario("seed-example")
    view = world.cluster_view()
    capture = ClusterView(now=view.now, cells=view.cells, loads=view.loads, apps=view.apps,
                          rows=view.rows, tasks=view.tasks, domains=view.domains, events=())
    clone = world_from_view(capture)
    assert clone.queue
    due = clone.next_due()
    assert due is not None and due <= view.now, (due, view.now)
