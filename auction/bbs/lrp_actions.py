"""LRP convergence, action phase A1-A6 (bbs.md 4.3, a **[project rule]** order).

Each action re-reads its row and does nothing, sending no start, when the row is gone
or is no longer the row the selection found (other presence, state or cell). Writes
go to an overlay over the selection's rows, so the pass never copies the table and
each write is also recorded as a ``RowOp`` for the shell, in application order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from auction.bbs import events as ev
from auction.bbs.changes import RowCreate, RowDelete, RowOp, RowUpdate, StopRequest
from auction.bbs.lrp_convergence import LRPSelection
from auction.bbs.lrp_operations import new_unclaimed, promote, to_suspect, unclaim
from auction.bbs.types import (
    CLAIMED,
    CRASHED,
    ORDINARY,
    RUNNING,
    SUSPECT,
    UNCLAIMED,
    ActualLRP,
    LRPKey,
    RowKey,
)

# Gives the modification-tag epoch of a row the pass creates. The default keeps the
# core deterministic; a database shell passes e.g. ``lambda key: uuid4().hex``.
EpochFactory = Callable[[RowKey], str]


def _no_epoch(key: RowKey) -> str:
    return ""


@dataclass(slots=True)
class LRPConvergence:
    """What the LRP pass did: the case-output lists (bbs.md 11, conformance.md 2) as
    (process_guid, index) keys, plus the writes, stops and events for a shell."""

    start: list[LRPKey] = field(default_factory=list)
    create: list[LRPKey] = field(default_factory=list)
    retire: list[LRPKey] = field(default_factory=list)
    suspect: list[LRPKey] = field(default_factory=list)
    unclaim: list[LRPKey] = field(default_factory=list)
    promote: list[LRPKey] = field(default_factory=list)
    remove_suspect: list[LRPKey] = field(default_factory=list)
    remove_evacuating: list[LRPKey] = field(default_factory=list)
    pruned_domains: list[str] = field(default_factory=list)
    ops: list[RowOp] = field(default_factory=list)  # apply in this order
    stops: list[StopRequest] = field(default_factory=list)
    events: list[ev.Event] = field(default_factory=list)
    # key -> row after the actions (None = deleted), for the keys the pass wrote.
    written: dict[RowKey, ActualLRP | None] = field(default_factory=dict)


class _Rows:
    """The selection's rows plus this pass's writes; records every write as an op."""

    __slots__ = ("out", "sel")

    def __init__(self, sel: LRPSelection, out: LRPConvergence) -> None:
        self.sel = sel
        self.out = out

    def get(self, key: RowKey) -> ActualLRP | None:
        written = self.out.written
        return written[key] if key in written else self.sel.row_at(key)

    def delete(self, row: ActualLRP, *, group: bool) -> None:
        self.out.written[row.key] = None
        self.out.ops.append(RowDelete(row.key, row))
        self.out.events.extend(ev.removed(row, group=group))

    def update(self, before: ActualLRP, after: ActualLRP, *, group: bool) -> None:
        if after.key != before.key:
            self.out.written[before.key] = None
        self.out.written[after.key] = after
        self.out.ops.append(RowUpdate(before.key, before, after))
        self.out.events.extend(ev.changed(before, after, group=group))

    def create(self, row: ActualLRP, *, group: bool) -> None:
        self.out.written[row.key] = row
        self.out.ops.append(RowCreate(row))
        self.out.events.extend(ev.created(row, group=group))


@dataclass(slots=True)
class _Pass:
    """One pass's working state: the selection, the writes so far, the pass's inputs."""

    sel: LRPSelection
    out: LRPConvergence
    rows: _Rows
    now: float
    cells: frozenset[str]
    epoch: EpochFactory

    def current(self, lrp_key: LRPKey, presence: str) -> ActualLRP | None:
        """The row to act on, or None when it changed since the selection (bbs.md 4.3: an
        action on a row that changed meanwhile does nothing)."""
        key = (lrp_key[0], lrp_key[1], presence)
        found = self.sel.row_at(key)
        row = self.rows.get(key)
        if row is None or found is None:
            return None
        if (row.presence, row.state, row.cell_id) != (found.presence, found.state, found.cell_id):
            return None
        return row


def apply_actions(
    sel: LRPSelection,
    now: float,
    cells: frozenset[str],
    epoch: EpochFactory = _no_epoch,
) -> LRPConvergence:
    """Apply A1-A6 of bbs.md 4.3 to the selection's lists, in that order."""
    out = LRPConvergence(pruned_domains=list(sel.pruned_domains))
    state = _Pass(sel, out, _Rows(sel, out), now, cells, epoch)
    for evacuating in sel.remove_evacuating:  # 0b: pruned before the selection proper
        state.rows.delete(evacuating, group=True)
        out.remove_evacuating.append(evacuating.lrp_key)
    for action in (retire, remove_suspects, promote_suspects, handle_lost_cells,
                   restart_unstarted, create_missing):
        action(state)
    return out


def retire(p: _Pass) -> None:
    """A1 Retire: every listed key counts as retired, whatever the re-read finds; a
    CLAIMED/RUNNING row on a present cell gets a stop (the row goes when the cell reports
    the container removed, bbs.md 2.3), any other row is deleted."""
    for lrp_key in p.sel.to_retire:
        p.out.retire.append(lrp_key)
        row = p.current(lrp_key, ORDINARY)
        if row is None:
            continue
        if row.state in (CLAIMED, RUNNING) and row.cell_id in p.cells:
            p.out.stops.append(StopRequest(row.key, row.cell_id, row.instance_guid))
        else:
            p.rows.delete(row, group=True)


def remove_suspects(p: _Pass) -> None:
    """A2: suspects orphaned in a fresh domain, or redundant, go; no stop is sent."""
    for lrp_key in p.sel.suspects_to_remove:
        row = p.current(lrp_key, SUSPECT)
        if row is not None:
            p.rows.delete(row, group=True)
            p.out.remove_suspect.append(lrp_key)


def promote_suspects(p: _Pass) -> None:
    """A3: the ORDINARY row goes first (any state), then the suspect takes its key."""
    for lrp_key in p.sel.to_promote:
        row = p.current(lrp_key, SUSPECT)
        if row is None:
            continue
        replaced = p.rows.get((lrp_key[0], lrp_key[1], ORDINARY))
        if replaced is not None:
            p.rows.delete(replaced, group=True)
        p.rows.update(row, promote(row), group=False)
        p.out.promote.append(lrp_key)


def handle_lost_cells(p: _Pass) -> None:
    """A4: instances of cells whose presence is gone turn SUSPECT and get a replacement;
    missing-cell handling emits instance events only (bbs.md 8)."""
    for lrp_key in p.sel.missing_cell_keys:
        row = p.current(lrp_key, ORDINARY)
        if row is None:
            continue
        if lrp_key in p.sel.suspect_set:
            # A suspect already stands in: take the replacement back to UNCLAIMED with no
            # start; it is re-auctioned once stale (bbs.md 4.3, 10).
            after = unclaim(row, p.now)
            if isinstance(after, ActualLRP):
                p.rows.update(row, after, group=False)
                p.out.unclaim.append(lrp_key)
            continue
        if p.rows.get((lrp_key[0], lrp_key[1], SUSPECT)) is not None:
            # A SUSPECT row outside the suspect set (neither CLAIMED nor RUNNING) holds the
            # key: the presence change would break the unique key, and fails in Diego's
            # database the same way.
            continue
        p.rows.update(row, to_suspect(row), group=False)
        p.out.suspect.append(lrp_key)
        _create(p.rows, p.out, p.sel, lrp_key, p.now, p.epoch, group=False)


def restart_unstarted(p: _Pass) -> None:
    """A5: a CRASHED row due for its restart goes through UNCLAIMED; a stale UNCLAIMED row
    is only re-auctioned, ``since`` and placement error untouched (bbs.md 10)."""
    for lrp_key in p.sel.unstarted:
        row = p.current(lrp_key, ORDINARY)
        if row is None:
            continue
        if row.state == CRASHED:
            after = unclaim(row, p.now)
            if not isinstance(after, ActualLRP):
                continue
            p.rows.update(row, after, group=True)
            p.out.unclaim.append(lrp_key)
        elif row.state != UNCLAIMED:
            continue
        p.out.start.append(lrp_key)


def create_missing(p: _Pass) -> None:
    """A6: a missing index gets a row, only if its key is still empty (a promotion may
    have filled it); the selection found no ORDINARY row there, so only this pass's
    writes count."""
    for lrp_key in p.sel.missing:
        if p.out.written.get((lrp_key[0], lrp_key[1], ORDINARY)) is None:
            _create(p.rows, p.out, p.sel, lrp_key, p.now, p.epoch, group=True)


def _create(
    rows: _Rows,
    out: LRPConvergence,
    sel: LRPSelection,
    lrp_key: LRPKey,
    now: float,
    epoch: EpochFactory,
    *,
    group: bool,
) -> None:
    """A new ORDINARY UNCLAIMED row (``since`` = now, count 0) and its start."""
    key = (lrp_key[0], lrp_key[1], ORDINARY)
    domain = sel.desired[lrp_key[0]].domain
    rows.create(new_unclaimed(lrp_key[0], lrp_key[1], domain, now, epoch(key)), group=group)
    out.create.append(lrp_key)
    out.start.append(lrp_key)
