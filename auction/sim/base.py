"""A cluster snapshot cloned into the in-memory world (plans.md 1: a plan's base).

``world_from_view`` turns a ``ClusterView`` (the live database's, or a loaded
foundation's) into a ``World`` that runs forward under the same rules the live cluster
runs: the same cells with their state and presence, the desired LRPs, every ActualLRP row
with its presence and timers, the tasks, the domains, the clock, the auctioneer's queue
and the convergence timer. Run forward, the clone and the live cluster make the same
decisions (tests/sim/test_base.py checks it line for line).

A capture (``cfdot``) has no queue, no timer and no scenario: the clone queues every
UNCLAIMED ORDINARY row of a desired LRP and every PENDING Diego task (as the auctioneer
holds them after a restart, auction.md 1), and the first convergence pass falls one
interval after the capture. CRASHED rows need nothing more: their restart is the
convergence rule's (bbs.md 4), read from ``crash_count`` and ``since`` like any row.
"""

from __future__ import annotations

from dataclasses import replace

from auction.bbs import types as core
from auction.bbs.collector import collector_paused
from auction.engine import AuctionConfig
from auction.sim.cfdot import ClusterView
from auction.sim.changes import ChangeSet
from auction.sim.memory import LogEntry, World
from auction.sim.model import QueuedWork


def world_from_view(view: ClusterView, config: AuctionConfig | None = None,
                    convergence: core.ConvergenceConfig | None = None, seed: int = 0,
                    *, record_log: bool = True) -> World:
    """The in-memory clone of ``view`` (see the module docstring)."""
    with collector_paused():  # a quarter of a million rows, none of them cyclic
        return _world_from_view(view, config, convergence, seed, record_log)


def _world_from_view(view: ClusterView, config: AuctionConfig | None,
                     convergence: core.ConvergenceConfig | None, seed: int, record_log: bool) -> World:
    world = World(seed=seed, config=config or AuctionConfig(seed=seed),
                  convergence=convergence or core.ConvergenceConfig(),
                  convergence_interval_s=view.convergence_interval_s, now=view.now,
                  next_convergence_at=(view.next_convergence_at if view.next_convergence_at is not None
                                       else view.now + view.convergence_interval_s),
                  record_log=record_log)
    apps = sorted(view.apps, key=lambda a: a.process_guid)
    cells = sorted(view.cells, key=lambda c: c.cell_id)
    # Sizes first: every row put below is accounted on its cell at its app's size.
    world.apply(ChangeSet(view.now, apps_put=apps, cells_put=cells,
                          domains_put=dict(view.domains)))
    world.restore_rows(view.rows)
    world.restore_tasks(view.tasks)
    queue = list(view.queue) if view.queue else _queue_of_capture(view, world)
    world.restore_queue(queue)
    for position, (at, marker, action, args) in enumerate(view.timeline):
        world.timeline.append((at, position, marker, action, dict(args)))
    if record_log:
        world.log = [LogEntry(at, type_, key) for at, type_, key in view.events]
    return world


def _queue_of_capture(view: ClusterView, world: World) -> list[QueuedWork]:
    """What the auctioneer would hold for a capture: its unclaimed work, oldest first."""
    out: list[QueuedWork] = []
    unclaimed = sorted((r for r in view.rows if r.presence == core.ORDINARY and r.state == core.UNCLAIMED
                        and r.process_guid in world.apps), key=lambda r: (r.since or 0.0, r.process_guid, r.index))
    for row in unclaimed:
        out.append(QueuedWork(len(out) + 1, "lrp", row.process_guid, row.index,
                              queued_at=row.since if row.since is not None else view.now,
                              reason="capture", last_error=row.placement_error))
    pending = sorted((t for t in view.tasks if t.task.state == core.PENDING and t.placement_mode == "diego"),
                     key=lambda t: (t.task.created_at or 0.0, t.task_guid))
    for sim_task in pending:
        out.append(QueuedWork(len(out) + 1, "task", task_guid=sim_task.task_guid,
                              queued_at=sim_task.task.created_at or view.now, reason="capture"))
    return [replace(q, queued_at=min(q.queued_at, view.now)) for q in out]
