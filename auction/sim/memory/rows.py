"""The memory store's ActualLRP rows by key, and what it keeps of them per write.

The rows by key are what the database holds; everything else here (rows by process guid
and by cell, each cell's load, the count of copies, the listing in key order and the apps
written since the last pass) is derived from them and the apps' and cells' sizes, and
``check.rebuild`` makes each of those anew from the rows alone. The reps' timers pushed on
a write go to ``timers.TimerHeaps`` (one module for every heap).
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any

from auction.bbs import types as core
from auction.sim.loads import HOLDING_STATES, add_lrp, holds_container, restate_lrp
from auction.sim.memory.timers import TimerHeaps
from auction.sim.model import Load


class RowTable:
    """The ActualLRP rows by key, with each cell's load kept per write; a written row's
    timers go to the world's ``TimerHeaps`` (checked against the row when they come due)."""

    __slots__ = ("_added", "_at", "_changed", "_gone", "_listed", "_order", "_rows", "by_cell", "by_guid",
                 "copies", "loads", "proxy", "sizes", "stale", "timers", "written")

    def __init__(self, sizes: dict[str, tuple[int, int]], proxy: dict[str, int], timers: TimerHeaps) -> None:
        self._rows: dict[core.RowKey, core.ActualLRP] = {}
        self.sizes = sizes  # shared with the world: process guid -> (memory, disk)
        self.proxy = proxy  # shared with the world: cell id -> proxy memory
        self.loads: dict[str, Load] = {}
        self.by_guid: dict[str, set[core.RowKey]] = {}
        self.by_cell: dict[str, set[core.RowKey]] = {}
        self.timers = timers  # shared with the world
        # Cells whose load changed since the world last copied it (``World.loads``).
        self.stale: set[str] = set()
        # The keys in order as of the last ``in_key_order``, and the keys added and gone
        # since: an update in place keeps the key, so most passes find nothing to sort.
        self._order: list[core.RowKey] | None = None
        self._added: set[core.RowKey] = set()
        self._gone: set[core.RowKey] = set()
        # The rows as the last ``in_key_order`` listed them, and the keys written since:
        # when no key came or went, only those are read anew (a pass at 250,000 rows
        # looked up every one). ``_at`` is each key's position in ``_order``.
        self._listed: list[core.ActualLRP] | None = None
        self._at: dict[core.RowKey, int] | None = None
        self._changed: set[core.RowKey] = set()
        # The apps any of whose rows was written, added or removed between the listings
        # since ``World`` last took a pass's plain apps (``plain_apps.PlainApps``).
        self.written: set[str] = set()
        # How many rows are EVACUATING or SUSPECT copies (a key's presence never changes:
        # counted as keys come and go); without any, a start looks none up.
        self.copies = 0

    def __getstate__(self) -> tuple[None, dict[str, Any]]:
        """A copy (``World.clone``) leaves the listing behind: it is made again on demand."""
        state = {name: getattr(self, name) for name in self.__slots__}
        state["_listed"] = state["_at"] = None
        return None, state

    def _account(self, row: core.ActualLRP, sign: int) -> None:
        if not holds_container(row.state, row.cell_id):
            return
        self.stale.add(row.cell_id)
        load = self.loads.get(row.cell_id)
        if load is None:
            load = self.loads[row.cell_id] = Load()
        memory, disk = self.sizes.get(row.process_guid, (0, 0))
        add_lrp(load, row.process_guid, row.state, memory, disk, self.proxy.get(row.cell_id, 0), sign)

    def _index(self, row: core.ActualLRP, add: bool) -> None:
        key = row.key
        _index_key(self.by_guid, row.process_guid, key, add)
        _index_key(self.by_cell, row.cell_id, key, add)

    def __setitem__(self, key: core.RowKey, row: core.ActualLRP) -> None:
        old = self._rows.get(key)
        if old is not None:
            self._account(old, -1)
            self._index(old, False)
        else:
            if key[2] != core.ORDINARY:
                self.copies += 1
            if key in self._gone:
                self._gone.discard(key)
            else:
                self._added.add(key)
        self._rows[key] = row
        self._changed.add(key)
        self._account(row, +1)
        self._index(row, True)
        self.timers.row_written(row)

    def update(self, key: core.RowKey, row: core.ActualLRP) -> None:
        """``pop(key)`` then ``self[row.key] = row`` (the row moves to the end of the
        order); the indexes are left alone when the row stays on its cell."""
        old = self._rows.get(key)
        if old is None or row.key != key:
            self.pop(key, None)
            self[row.key] = row
            return
        del self._rows[key]
        self._rows[key] = row
        self._changed.add(key)
        if old.cell_id != row.cell_id:
            # A claim: ``pop`` then set, in their order, the same key in and out of the
            # keys added or gone since the last ``in_key_order`` (no change there). The
            # key, and so the process, is the same: only the index by cell moves.
            if old.cell_id:  # an UNCLAIMED row is on no cell: nothing to take back
                self._account(old, -1)
                _index_key(self.by_cell, old.cell_id, key, False)
            self._account(row, +1)
            _index_key(self.by_cell, row.cell_id, key, True)
            self.timers.row_written(row)
            return
        if (old.state in HOLDING_STATES and row.state in HOLDING_STATES
                and old.process_guid in self.sizes and old.cell_id in self.loads):
            # The container stays where it was (a start): only the starting count moves.
            self.stale.add(row.cell_id)
            restate_lrp(self.loads[row.cell_id], row.process_guid, old.state, row.state)
        else:
            self._account(old, -1)
            self._account(row, +1)
        self.timers.row_written(row)

    def __delitem__(self, key: core.RowKey) -> None:
        row = self._rows.pop(key)
        if key[2] != core.ORDINARY:
            self.copies -= 1
        if key in self._added:
            self._added.discard(key)
        else:
            self._gone.add(key)
        self._account(row, -1)
        self._index(row, False)

    def pop(self, key: core.RowKey, default: Any = None) -> Any:
        if key not in self._rows:
            return default
        row = self._rows[key]
        del self[key]
        return row

    def resize(self, process_guid: str, size: tuple[int, int]) -> None:
        """An app's memory or disk changed (or it went): re-account its instances."""
        rows = [self._rows[k] for k in self.by_guid.get(process_guid, ())]
        for row in rows:
            self._account(row, -1)
        self.sizes[process_guid] = size
        for row in rows:
            self._account(row, +1)

    def reproxy(self, cell_id: str, proxy: int) -> None:
        rows = [self._rows[k] for k in self.by_cell.get(cell_id, ())]
        for row in rows:
            self._account(row, -1)
        self.proxy[cell_id] = proxy
        for row in rows:
            self._account(row, +1)

    def holders(self, process_guid: str) -> dict[str, int]:
        """The app's instances that hold a container, per cell (its cells' ``Load.lrps``)."""
        counts: dict[str, int] = {}
        rows = self._rows
        for key in self.by_guid.get(process_guid, ()):
            row = rows[key]
            if holds_container(row.state, row.cell_id):
                counts[row.cell_id] = counts.get(row.cell_id, 0) + 1
        return counts

    @property
    def table(self) -> Mapping[core.RowKey, core.ActualLRP]:
        """The rows by key, to read (a hot loop's lookups without a method call each)."""
        return self._rows

    def listing_holds(self) -> bool:
        """Whether no row was written, added or removed since the last ``in_key_order``."""
        return self._listed is not None and not (self._changed or self._added or self._gone)

    def in_key_order(self) -> list[core.ActualLRP]:
        """Every row, by key (the order a convergence pass reads them in)."""
        order = self._order
        rows = self._rows
        listed = self._listed
        self._fold_written()
        if order is None or listed is None or self._added or self._gone:
            if order is None:
                order = sorted(rows)
            elif self._added or self._gone:
                if self._gone:
                    gone = self._gone
                    order = [k for k in order if k not in gone]
                order += sorted(self._added)
                order.sort()  # two sorted runs: one merge
            listed = list(map(rows.__getitem__, order))
            self._at = None
        elif self._changed:
            at = self._at
            if at is None:
                at = self._at = dict(zip(order, range(len(order)), strict=True))
            for key in self._changed:
                pos = at.get(key)  # a key added then deleted since is in neither
                if pos is not None:
                    listed[pos] = rows[key]
        self._order = order
        self._listed = listed
        self._added.clear()
        self._gone.clear()
        self._changed.clear()
        return list(listed)

    def pending(self) -> set[core.RowKey]:
        """The keys written, added or removed since the last ``in_key_order``."""
        return self._changed | self._added | self._gone

    def listing(self) -> tuple[list[core.RowKey], list[core.ActualLRP]] | None:
        """The keys and rows as the last ``in_key_order`` listed them (None: none kept)."""
        if self._order is None or self._listed is None:
            return None
        return self._order, self._listed

    def _fold_written(self) -> None:
        """The apps of the rows written or removed since the last listing join ``written``
        (so a pass reads them anew, whatever it found them before)."""
        written = self.written
        written.update(key[0] for key in self._changed)
        written.update(key[0] for key in self._gone)

    def of_guid(self, process_guid: str) -> list[core.ActualLRP]:
        return [self._rows[k] for k in sorted(self.by_guid.get(process_guid, ()))]

    def on_cell(self, cell_id: str) -> list[core.ActualLRP]:
        return [self._rows[k] for k in sorted(self.by_cell.get(cell_id, ()))]

    def __getitem__(self, key: core.RowKey) -> core.ActualLRP:
        return self._rows[key]

    def get(self, key: core.RowKey, default: Any = None) -> Any:
        return self._rows.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    def __iter__(self) -> Iterator[core.RowKey]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def keys(self) -> KeysView[core.RowKey]:
        return self._rows.keys()

    def values(self) -> ValuesView[core.ActualLRP]:
        return self._rows.values()

    def items(self) -> ItemsView[core.RowKey, core.ActualLRP]:
        return self._rows.items()


def _index_key(index: dict[str, set[core.RowKey]], name: str, key: core.RowKey, add: bool) -> None:
    if not name:
        return
    keys = index.get(name)
    if add:
        if keys is None:
            keys = index[name] = set()
        keys.add(key)
    elif keys is not None:
        keys.discard(key)
        if not keys:
            del index[name]
