"""One convergence pass: LRPs, then tasks, then metrics, then one start request.

The entry point a shell calls (bbs.md 4, 7, 9): a pure function from a ``Snapshot``
to a ``ConvergenceResult`` holding the case-output lists, the ordered row changes,
the stops, the events and the metrics. The shell applies ``lrp.ops`` and
``tasks.ops`` in one transaction, records ``metrics``, then sends ``start_request``
(bbs.md 4.3: after the metrics) and the stops, and publishes ``events`` after commit.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from auction.bbs import events as ev
from auction.bbs.collector import collector_paused
from auction.bbs.lrp_actions import EpochFactory, LRPConvergence, apply_actions
from auction.bbs.lrp_convergence import LRPSelection, select
from auction.bbs.metrics import Metrics, lrp_metrics, task_metrics
from auction.bbs.plain_apps import PlainApps, selection_plain_apps
from auction.bbs.task_convergence import TaskConvergence, converge_tasks
from auction.bbs.types import CRASHED, UNCLAIMED, LRPKey, Snapshot, fresh_domains


@dataclass(slots=True, frozen=True)
class StartRequest:
    """The single request of the pass to the auctioneer (bbs.md 4.3, 7 step 2)."""

    lrps: tuple[LRPKey, ...] = ()
    tasks: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.lrps or self.tasks)


@dataclass(slots=True, frozen=True)
class QuietLRPs:
    """An LRP half that did nothing and waits on no clock, with the snapshot it read.

    Only steps 1 (stale UNCLAIMED) and 10 (CRASHED, ready to restart) and the domains'
    expiry read the clock; a half that chose nothing, with no UNCLAIMED or CRASHED
    ORDINARY row, chooses nothing again over the same rows, desired LRPs, cells and
    config while every domain stays as fresh. A store that can vouch its rows did not
    change (it hands the very same ``actual`` list) passes it to ``converge`` instead of
    having every row walked again: a settled 250,000-instance plan is mostly such passes.
    """

    snapshot: Snapshot
    selection: LRPSelection
    lrp: LRPConvergence

    def answers(self, snapshot: Snapshot) -> bool:
        """Whether this half is the LRP half of a pass over ``snapshot``."""
        before = self.snapshot
        return (snapshot.actual is before.actual and snapshot.cells == before.cells
                and snapshot.config == before.config and snapshot.domains == before.domains
                and snapshot.desired == before.desired
                and fresh_domains(snapshot.domains, snapshot.now) == self.selection.fresh)


def quiet_lrps(snapshot: Snapshot, sel: LRPSelection, lrp: LRPConvergence) -> QuietLRPs | None:
    """The half as a ``QuietLRPs`` when it did nothing and waits on no clock, else None."""
    if any(getattr(lrp, f.name) for f in fields(lrp)) or sel.pruned_domains:
        return None
    if sel.ordinary_by_state.get(UNCLAIMED) or sel.ordinary_by_state.get(CRASHED):
        return None
    return QuietLRPs(snapshot, sel, lrp)


@dataclass(slots=True, frozen=True)
class KeptParts:
    """What a store kept of its last pass for this one: the quiet LRP half, when it
    vouches no row was written since (``QuietLRPs``), and the plain apps whose rows it
    left out of the snapshot (``plain_apps.PlainApps``: the part of the selection the
    pass merges in). A store that keeps parts gets the next pass's plain apps back
    (``ConvergenceResult.plain``)."""

    quiet: QuietLRPs | None = None
    plain: PlainApps | None = None


@dataclass(slots=True)
class ConvergenceResult:
    selection: LRPSelection
    lrp: LRPConvergence
    tasks: TaskConvergence
    metrics: Metrics
    start_request: StartRequest = field(default_factory=StartRequest)
    # The LRP half, when it may answer the next pass over unchanged rows (``QuietLRPs``).
    quiet: QuietLRPs | None = None
    # The plain apps for the next pass of a store that keeps parts (``KeptParts``), when
    # this one read rows (None: the quiet half answered, the last ones still hold).
    plain: PlainApps | None = None

    @property
    def events(self) -> list[ev.Event]:
        return self.lrp.events + self.tasks.events


def converge(snapshot: Snapshot, *, epoch: EpochFactory | None = None,
             quiet: QuietLRPs | None = None, kept: KeptParts | None = None) -> ConvergenceResult:
    """One LRP pass and one task pass at ``snapshot.now`` with C = ``snapshot.cells``.

    ``epoch`` names the modification-tag epoch of each row the pass creates (default
    "", keeping the pass deterministic). ``quiet``, the last pass's quiet LRP half, is
    its answer again when it answers this snapshot (``QuietLRPs.answers``); ``kept``
    carries it with the plain apps left out of ``snapshot.actual`` (``KeptParts``).
    """
    if kept is not None and kept.quiet is not None:
        quiet = kept.quiet
    plain = None
    with collector_paused():
        if quiet is not None and quiet.answers(snapshot):
            sel, lrp = quiet.selection, quiet.lrp
        else:
            part = kept.plain if kept is not None else None
            sel, lrp = _lrps(snapshot, epoch, part)
            if kept is not None:
                plain = selection_plain_apps(sel, snapshot.cells, snapshot.desired, part)
            quiet = quiet_lrps(snapshot, sel, lrp)
        tasks = converge_tasks(snapshot.tasks, snapshot.cells, snapshot.now, snapshot.config)
        metrics = lrp_metrics(sel, lrp, len(snapshot.cells))
        metrics.update(task_metrics(tasks))
        start = StartRequest(tuple(dict.fromkeys(lrp.start)), tuple(dict.fromkeys(tasks.start)))
    return ConvergenceResult(sel, lrp, tasks, metrics, start, quiet, plain)


def _lrps(snapshot: Snapshot, epoch: EpochFactory | None,
          part: PlainApps | None = None) -> tuple[LRPSelection, LRPConvergence]:
    """The selection over ``snapshot.actual`` with the pre-built ``part`` merged in, then
    the actions (bbs.md 4.2, 4.5)."""
    sel = select(snapshot, part.apps if part is not None else None)
    if epoch is None:
        return sel, apply_actions(sel, snapshot.now, snapshot.cells)
    return sel, apply_actions(sel, snapshot.now, snapshot.cells, epoch)
