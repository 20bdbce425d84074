"""The memory store's ``apply``: a ``ChangeSet`` written into the world.

It writes the truth (``state.WorldState``) and brings every index kept over it up to date
in the same step; ``check`` rebuilds those indexes from the truth after each apply when
``DIEGO_CHECK_DERIVED`` is on.
"""

from __future__ import annotations

from dataclasses import replace

from auction.bbs import types as core
from auction.bbs.changes import RowCreate, RowDelete, RowUpdate, TaskDelete
from auction.sim.changes import ChangeSet
from auction.sim.lrps import void_requests
from auction.sim.memory import check
from auction.sim.memory.check import checking
from auction.sim.memory.due import Due
from auction.sim.memory.fetch import Fetch
from auction.sim.memory.records import AuctionRecord, LogEntry, entries
from auction.sim.model import DRAINING, SimCell
from auction.sim.replay_record import COPY_PRECEDENCE, copy_keys, named_copy, replay_fields
from auction.sim.round import RoundRecord
from auction.sim.timers import NEW_WORK
from auction.sim.where import holds_all


class Apply(Due, Fetch):
    """``Store.apply`` and the writes it is made of."""

    __slots__ = ()

    def apply(self, change: ChangeSet) -> None:
        at = change.at
        timers = self.timers
        checked = checking()
        if checked and change.convergence is not None:
            check.pass_answer(self, change)
        if checked and change.auction is not None:
            check.round_answer(self, change)
        if change.apps_put or change.apps_removed:
            self._forget_desired()
        for app in change.apps_put:
            self.apps[app.process_guid] = app
            if self.sizes.get(app.process_guid) != (app.memory_mb, app.disk_mb):
                self.rows.resize(app.process_guid, (app.memory_mb, app.disk_mb))
        for guid in change.apps_removed:
            self.apps.pop(guid, None)
            self.rows.resize(guid, (0, 0))
        for cell in change.cells_put:
            self._cell_put(cell)
        rows = self.rows
        for op in change.lrp_ops:
            # Most ops (claims, starts) are updates: tried first, in the loop itself.
            if isinstance(op, RowUpdate):
                after = op.after
                if after.state == core.CLAIMED and op.before.state == core.UNCLAIMED:
                    self._blob_cached(after)
                rows.update(op.key, after)
            elif isinstance(op, RowCreate):
                rows[op.row.key] = op.row
            elif isinstance(op, RowDelete):
                rows.pop(op.key, None)
        if change.tasks_put or change.task_ops:
            self._tasks_changed()
        for sim_task in change.tasks_put:
            self.tasks[sim_task.task_guid] = sim_task
        for top in change.task_ops:
            guid = top.before.task_guid
            if isinstance(top, TaskDelete):
                self.tasks.pop(guid, None)
            elif guid in self.tasks:
                self.tasks[guid] = replace(self.tasks[guid], task=top.after)
                timers.task_written(top.after)
        self.domains.update(change.domains_put)
        for name in change.domains_removed:
            self.domains.pop(name, None)
        queued = len(self.queue)
        for seq in change.queue_remove:
            self.queue.pop(seq, None)
            timers.new_work_drop(seq)
        for guid, keep in change.queue_drop:
            void = void_requests(guid, keep)
            for seq in [s for s, q in self.queue.items() if holds_all(void, q)]:
                del self.queue[seq]
                timers.new_work_drop(seq)
        for q in change.queue_put:
            if q.seq in self.queue:
                self.queue[q.seq] = q
                if not NEW_WORK.applies(q):
                    timers.new_work_drop(q.seq)
        if queued > 64 and len(self.queue) <= queued // 2:
            # A dict never shrinks: once 100,000 items left, every walk of the queue (each
            # auction's) would still step over 100,000 empty slots.
            self.queue, timers.new_work = dict(self.queue), dict(timers.new_work)
        for q in change.queue_add:
            self.seq += 1
            self.queue[self.seq] = q.numbered(self.seq)
            timers.new_work_add(self.seq, q.queued_at)
        if self.record_log:
            self.log += entries(at, change.events)
            self.log += [LogEntry(at, n.type, n.key, n.cell_id) for n in change.notes]
        if change.counters:
            self.counters.update(change.counters)
        if change.auction is not None:
            self._record_auction(change.auction)
        if change.convergence is not None:
            self.passes.append((at, dict(change.convergence.metrics)))
            result = change.convergence.result
            self.lrp_quiet = result.quiet
            if result.plain is not None:  # a pass that read the rows: its plain apps
                self.lrp_plain = result.plain
                self.rows.written = set()
        if change.next_convergence_at is not None:
            self.next_convergence_at = change.next_convergence_at
        self.done_steps.update(change.steps_done)
        if checked:
            check.after_apply(self)

    def _cell_put(self, cell: SimCell) -> None:
        old = self.cells.get(cell.cell_id)
        self.cells[cell.cell_id] = cell
        self._cell_changed(cell.cell_id)
        if cell.state == DRAINING:
            self.draining.add(cell.cell_id)
        else:
            self.draining.discard(cell.cell_id)
        if cell.presence_lost_at is None:
            self.lapsing.pop(cell.cell_id, None)
        else:
            self.lapsing[cell.cell_id] = cell.presence_lost_at
            self.timers.lapse_at(cell.presence_lost_at, cell.cell_id)
        if old is None or old.proxy_memory_mb != cell.proxy_memory_mb:
            self.rows.reproxy(cell.cell_id, cell.proxy_memory_mb)
        if old is not None and old.silent and not cell.silent:
            self.timers.release(cell.cell_id)  # its rep reports again

    def _blob_cached(self, claimed: core.ActualLRP) -> None:
        """The objective strategy's blob cache: every app a cell ever ran."""
        blobs = self.cached.get(claimed.cell_id)
        if blobs is None:
            blobs = self.cached[claimed.cell_id] = set()
        if claimed.process_guid not in blobs:
            blobs.add(claimed.process_guid)
            self.unfetched.add(claimed.cell_id)

    def _record_auction(self, record: RoundRecord) -> None:
        result, stats = record.result, record.stats
        if self.initial_distribution is None:
            self.initial_distribution = stats.distribution_initial
        self.waits += record.waits
        self.attempts += record.attempts
        self.failures_by_error.update(result.failures.values())
        self.communications += stats.communications
        self.auctions.append(AuctionRecord(record.at, len(record.batch), dict(result.placements),
                                           dict(result.failures), list(result.order), stats))
        if self.replay_sink is not None and not self.replay_sink(
                replay_fields(record, self._copies(copy_keys(record)))):
            self.replay_sink = None

    def _copies(self, keys: set[tuple[str, int]]) -> dict[tuple[str, int], tuple[str, str]]:
        """The copy each instance's replay entry names (``named_copy``: one precedence)."""
        copies = {}
        for guid, index in keys:
            found = {p: row.cell_id for p in COPY_PRECEDENCE
                     if (row := self.rows.get((guid, index, p))) is not None}
            if (copy := named_copy(found)) is not None:
                copies[(guid, index)] = copy
        return copies
