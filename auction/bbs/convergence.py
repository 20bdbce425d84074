"""One convergence pass: LRPs, then tasks, then metrics, then one start request.

The entry point a shell calls (bbs.md 4, 7, 9): a pure function from a ``Snapshot``
to a ``ConvergenceResult`` holding the case-output lists, the ordered row changes,
the stops, the events and the metrics. The shell applies ``lrp.ops`` and
``tasks.ops`` in one transaction, records ``metrics``, then sends ``start_request``
(bbs.md 4.3: after the metrics) and the stops, and publishes ``events`` after commit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from auction.bbs import events as ev
from auction.bbs.collector import collector_paused
from auction.bbs.lrp_actions import EpochFactory, LRPConvergence, apply_actions
from auction.bbs.lrp_convergence import LRPSelection, select
from auction.bbs.metrics import Metrics, lrp_metrics, task_metrics
from auction.bbs.task_convergence import TaskConvergence, converge_tasks
from auction.bbs.types import LRPKey, Snapshot


@dataclass(slots=True, frozen=True)
class StartRequest:
    """The single request of the pass to the auctioneer (bbs.md 4.3, 7 step 2)."""

    lrps: tuple[LRPKey, ...] = ()
    tasks: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.lrps or self.tasks)


@dataclass(slots=True)
class ConvergenceResult:
    selection: LRPSelection
    lrp: LRPConvergence
    tasks: TaskConvergence
    metrics: Metrics
    start_request: StartRequest = field(default_factory=StartRequest)

    @property
    def events(self) -> list[ev.Event]:
        return self.lrp.events + self.tasks.events


def converge_lrps(snapshot: Snapshot, *, epoch: EpochFactory | None = None) -> LRPConvergence:
    """The LRP half only (selection then A1-A6)."""
    return _lrps(snapshot, epoch)[1]


def converge(snapshot: Snapshot, *, epoch: EpochFactory | None = None) -> ConvergenceResult:
    """One LRP pass and one task pass at ``snapshot.now`` with C = ``snapshot.cells``.

    ``epoch`` names the modification-tag epoch of each row the pass creates (default
    "", keeping the pass deterministic).
    """
    with collector_paused():
        sel, lrp = _lrps(snapshot, epoch)
        tasks = converge_tasks(snapshot.tasks, snapshot.cells, snapshot.now, snapshot.config)
        metrics = lrp_metrics(sel, lrp, len(snapshot.cells))
        metrics.update(task_metrics(tasks))
        start = StartRequest(tuple(dict.fromkeys(lrp.start)), tuple(dict.fromkeys(tasks.start)))
    return ConvergenceResult(sel, lrp, tasks, metrics, start)




def _lrps(snapshot: Snapshot, epoch: EpochFactory | None) -> tuple[LRPSelection, LRPConvergence]:
    sel = select(snapshot)
    if epoch is None:
        return sel, apply_actions(sel, snapshot.now, snapshot.cells)
    return sel, apply_actions(sel, snapshot.now, snapshot.cells, epoch)
