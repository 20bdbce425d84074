"""The ``diego`` strategy, fast path: zone walk, scores and tie-breaks (auction.md 4).

Diego scores every compatible cell for every item. Here each (request class, memory,
disk) keeps one heap of cells per zone (tasks: one heap), keyed by the cell's score for
that item *without* locality. Why that is exact:

* A cell's score only ever grows during an auction when ``starting_container_weight`` and
  ``locality_offset`` are ≥ 0: a win lowers its available resources and raises its
  starting count and instance counts, and IEEE rounding is monotonic (auction.md 4.5).
* So a heap key computed before the cell's latest win (its ``version`` moved on) is a lower
  bound of its current score, and so is a key for a cell that holds the item's process
  (locality ≥ 0 is added on top). Popping in key order, re-keying stale entries and scoring
  the few cells that hold the process exactly, the search stops as soon as the next key
  cannot beat the best (score, input position) found: ties go to the earlier cell as
  auction.md 4.6 demands.
* A cell that no longer fits never fits again (resources only shrink), so it leaves the heap.

The work per item is therefore a handful of heap operations, independent of how many
instances were placed before it. Once a process holds most cells (one big app spread over
every cell), nearly every entry popped is a holder to be scored exactly and pushed back:
when those pops for one process add up to a heap's size, the process gets heaps of its
own keyed by its exact score, locality included (a lower bound by the same argument: the
cell's count of the process only grows with its wins), so each of its items is again a
handful of heap operations. ``reference.py`` is the straightforward scan (and the
explanation path); both give identical results, which the tests check.

A caller that keeps its ``CellColumns`` between auctions keeps the LRP heaps too
(``KeptHeaps``): most cells did not change since the last auction, and their entries are
still exact. Before a heap serves again, each cell remade since (``CellColumns.dirty``) or
that won in the last auction (its count and resources there were tentative) gets a fresh
entry, its version stamp moved on; its older entries are dropped when they surface. So
every cell that fits keeps an entry whose key is its score without locality, as a heap
built anew would hold.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from heapq import heapify, heappop, heappush, heapreplace
from itertools import repeat
from operator import mul

from .gosort import go_sort_by_key
from .state import AuctionState, FilterClass
from .types import AuctionConfig, CellState, LRPWork, WorkItem

#: Diego's initial best score (auction.md 4.5): a score at or above it never wins.
INITIAL_BEST = 1e20

Entry = tuple[float, int, int]  # (score without locality, cell position, cell version)
#: An LRP heap's entry also keeps the resource-and-starting part of its key: a cell that
#: holds the item's process is scored from it (positions are unique in a heap, so the
#: comparisons never reach it).
LrpEntry = tuple[float, int, int, float]


def fast_path_applies(config: AuctionConfig) -> bool:
    """The heap search needs scores that never decrease (see the module docstring)."""
    return config.starting_container_weight >= 0 and config.locality_offset >= 0


def deal_bin_pack_order(cells: Sequence[CellState], go_compat: bool = False) -> list[CellState]:
    """auction.md 4.6: the order cells are tried in when ``bin_pack_first_fit_weight > 0``.

    Diego sorts each zone's cells by index (``normaliseCellIndices``) and tries a zone's
    cells in that order. The project deals the input positions a zone's cells occupy to
    those cells in index order (equal indices: input order, or Go's ``sort.Sort`` order with
    ``go_compat``, auction.md 2.1), so an in-zone tie goes to the lower index and the
    order across zones stays one Go's map iteration can produce.
    """
    positions: dict[str, list[int]] = {}
    for pos, cell in enumerate(cells):
        positions.setdefault(cell.zone, []).append(pos)
    dealt = list(cells)
    for zone_positions in positions.values():
        members = [cells[p] for p in zone_positions]
        if go_compat:
            ranked = go_sort_by_key(members, _cell_index)
        else:
            ranked = sorted(members, key=_cell_index)  # stable: equal indices keep input order
        for pos, cell in zip(zone_positions, ranked, strict=True):
            dealt[pos] = cell
    return dealt


def _cell_index(cell: CellState) -> int:
    return cell.index


def bin_indices(state: AuctionState, weight: float) -> list[int]:
    """auction.md 4.4: the per-zone rank by index when ``w_bin > 0``, else the raw index."""
    if weight <= 0:
        return list(state.index)
    ranks = [0] * len(state.index)
    by_zone: dict[str, list[int]] = {}
    for pos, zone in enumerate(state.zone_of):
        by_zone.setdefault(zone, []).append(pos)
    for positions in by_zone.values():
        # sorted() is stable: after ``deal_bin_pack_order`` equal indices are already in
        # the order the ranks must follow (input order, or Go's with go_compat).
        for rank, pos in enumerate(sorted(positions, key=state.index.__getitem__)):
            ranks[pos] = rank
    return ranks


#: Auctions a kept heap may sit unused and still be brought up to date from the log.
KEPT_LOG = 32
#: Beyond this share of a filter class's cells made dirty, a kept heap is built anew.
KEPT_DIRTY_SHARE = 0.25


class KeptHeaps:
    """The LRP heaps kept with a caller's ``CellColumns`` between auctions (module docstring).

    ``stamp`` is each position's version as the next auction starts (entries older than it
    are left over from before the cell changed); ``log`` the positions made dirty per
    auction; a heap remembers the auction it was last brought up to date for.
    """

    __slots__ = ("_bin", "auction", "heaps", "log", "stamp", "terms", "versions", "won")

    def __init__(self) -> None:
        self.auction = 0
        self.heaps: dict[tuple[int, int, int], tuple[int, dict[str, list[LrpEntry]]]] = {}
        self.log: deque[tuple[int, set[int]]] = deque(maxlen=KEPT_LOG)
        self.stamp: list[int] = []
        self.terms: tuple[object, ...] = ()
        self.versions: list[int] | None = None
        # The positions that won in the last auction (its state's ``won``): the only ones
        # whose version moved on during it (``AuctionState.reserve``).
        self.won: dict[int, list[WorkItem]] = {}
        # The last bin-pack term and what it was made of: (epoch, weight, indices, term).
        self._bin: tuple[int, float, list[int], list[float]] | None = None

    def bin_term(self, state: AuctionState, weight: float, epoch: int) -> list[float]:
        """``bin_indices`` times ``weight``, the very list again while the columns' epoch
        (their cells and zones), the weight and every index are the same: one comparison
        of the indices instead of a list made per auction, and the heaps' terms then
        compare it by identity."""
        made = self._bin
        if made is None or made[0] != epoch or made[1] != weight or made[2] != state.index:
            made = self._bin = (epoch, weight, list(state.index),
                                list(map(mul, bin_indices(state, weight), repeat(weight))))
        return made[3]

    def start(self, state: AuctionState, dirty: set[int] | None, terms: tuple[object, ...]) -> None:
        """Begin an auction: move the stamp of every dirty position, and hand the state
        its versions (the stamps: an entry made in an earlier auction stays comparable)."""
        n = len(state.version)
        self.auction += 1
        last = self.versions
        if dirty is None or terms != self.terms or len(self.stamp) != n or last is None:
            self.heaps.clear()
            self.log.clear()
            self.stamp = [0] * n
            self.terms = terms
        else:
            # Cells that won in the last auction: their entries saw tentative values
            # (their versions moved on; read from its wins, not by a walk of every cell).
            dirty.update(self.won)
            stamp = self.stamp
            for pos in dirty:
                stamp[pos] = last[pos] + 1
            self.log.append((self.auction, dirty))
        state.version = self.stamp.copy()
        self.versions = state.version
        self.won = state.won

    def since(self, auction: int) -> set[int] | None:
        """The positions made dirty after ``auction``; None when the log no longer reaches."""
        if auction == self.auction:
            return set()
        if not self.log or self.log[0][0] > auction + 1:
            return None
        dirty: set[int] = set()
        for at, positions in self.log:
            if at > auction:
                dirty |= positions
        return dirty


class DiegoChooser:
    """Picks the winning cell of one item against an ``AuctionState`` (auction.md 4.2-4.6)."""

    def __init__(self, state: AuctionState, config: AuctionConfig) -> None:
        self.state = state
        self.w_start = float(config.starting_container_weight)
        self.locality = int(config.locality_offset)
        w_bin = float(config.bin_pack_first_fit_weight)
        columns = state.kept_columns
        kept: KeptHeaps | None = None
        if columns is not None:
            if not isinstance(columns.kept, KeptHeaps):
                columns.kept = KeptHeaps()
            kept = columns.kept
            self.bin_term: list[float] = kept.bin_term(state, w_bin, columns.epoch)
        else:
            self.bin_term = list(map(mul, bin_indices(state, w_bin), repeat(w_bin)))
        self._lrp_heaps: dict[tuple[int, int, int], dict[str, list[LrpEntry]]] = {}
        self._task_heaps: dict[tuple[int, int, int], list[Entry]] = {}
        # A process's own heaps (see the module docstring), and the holder pops it has
        # cost the shared ones until it gets them.
        self._guid_heaps: dict[tuple[int, int, int, str], dict[str, list[Entry]]] = {}
        self._held_pops: dict[tuple[int, int, int, str], int] = {}
        self._kept: KeptHeaps | None = None
        if columns is not None and kept is not None:
            dirty, columns.dirty = columns.dirty, set()
            kept.start(state, dirty, (columns.epoch, self.w_start, self.bin_term))
            self._kept = kept
        # Entries older than a position's stamp were made before the cell last changed.
        self._base = self._kept.stamp if self._kept is not None else [0] * len(state.version)
        # The last LRP item that found no cell, and the state's win count then: the same
        # process and size in the same filter class finds none again until a win changes
        # the state (a flood's 100,000 unplaceable instances, one walk instead of each).
        self._no_cell: tuple[tuple[int, int, int, str], int] | None = None

    def choose(self, item: WorkItem, fc: FilterClass) -> tuple[int, float] | None:
        if type(item) is LRPWork:
            return self._choose_lrp(item, fc)
        return self._choose_task(item, fc)

    # -- scores (auction.md 4.4, operation order of 4.5) ----------------------------------

    def _resource_and_starting(self, pos: int, mem: int, disk: int) -> float:
        s = self.state
        fm = 1.0 - (s.a_mem[pos] - mem) / s.t_mem[pos]
        fd = 1.0 - (s.a_disk[pos] - disk) / s.t_disk[pos]
        fc = 1.0 - (s.a_cont[pos] - 1) / s.t_cont[pos]
        return ((fm + fd) + fc) / 3.0 + s.starting[pos] * self.w_start

    def _lrp_key(self, pos: int, mem: int, disk: int) -> float | None:
        """Score with ``n_same = 0``, or ``None`` when the cell does not fit."""
        s = self.state
        mem_eff = mem + s.proxy[pos]
        if s.a_disk[pos] < disk or s.a_mem[pos] < mem_eff or s.a_cont[pos] < 1:
            return None
        return (self._resource_and_starting(pos, mem_eff, disk) + 0.0) + self.bin_term[pos]

    def _task_key(self, pos: int, mem: int, disk: int) -> float | None:
        s = self.state
        if s.a_disk[pos] < disk or s.a_mem[pos] < mem or s.a_cont[pos] < 1:
            return None
        return self._resource_and_starting(pos, mem, disk) + float(
            self.locality * s.n_tasks[pos])

    def _heap(self, positions: list[int], key: Callable[[int, int, int], float | None],
              mem: int, disk: int) -> list[Entry]:
        version = self.state.version
        heap: list[Entry] = []
        for pos in positions:
            score = key(pos, mem, disk)
            if score is not None:
                heap.append((score, pos, version[pos]))
        heapify(heap)
        return heap

    def _lrp_heap(self, positions: Sequence[int], mem: int, disk: int) -> list[LrpEntry]:
        """``_heap`` with ``_lrp_key`` written out, operation for operation: every
        auction builds one per zone and request size over every cell (unless kept)."""
        heap = self._lrp_entries(positions, mem, disk)
        heapify(heap)
        return heap

    def _lrp_entries(self, positions: Sequence[int], mem: int, disk: int) -> list[LrpEntry]:
        st = self.state
        version = st.version
        a_mem, a_disk, a_cont = st.a_mem, st.a_disk, st.a_cont
        t_mem, t_disk, t_cont = st.t_mem, st.t_disk, st.t_cont
        starting, proxy, bin_term, w_start = st.starting, st.proxy, self.bin_term, self.w_start
        heap: list[LrpEntry] = []
        for pos in positions:
            mem_eff = mem + proxy[pos]
            if a_disk[pos] < disk or a_mem[pos] < mem_eff or a_cont[pos] < 1:
                continue
            fm = 1.0 - (a_mem[pos] - mem_eff) / t_mem[pos]
            fd = 1.0 - (a_disk[pos] - disk) / t_disk[pos]
            fc = 1.0 - (a_cont[pos] - 1) / t_cont[pos]
            part = ((fm + fd) + fc) / 3.0 + starting[pos] * w_start
            heap.append(((part + 0.0) + bin_term[pos], pos, version[pos], part))
        return heap

    def _lrp_heaps_for(self, fc: FilterClass, mem: int, disk: int) -> dict[str, list[LrpEntry]]:
        """The zones' heaps for one request shape: kept ones brought up to date, or new."""
        kept = self._kept
        if kept is None:
            return {z: self._lrp_heap(p, mem, disk) for z, p in fc.by_zone.items()}
        key = (fc.id, mem, disk)
        found = kept.heaps.get(key)
        dirty = kept.since(found[0]) if found is not None else None
        if found is None or dirty is None or len(dirty) > KEPT_DIRTY_SHARE * len(fc.cells):
            heaps = {z: self._lrp_heap(p, mem, disk) for z, p in fc.by_zone.items()}
        else:
            heaps = found[1]
            if dirty:
                zone_of = self.state.zone_of
                fresh: dict[str, list[int]] = {}
                for pos in sorted(dirty & fc.members):
                    fresh.setdefault(zone_of[pos], []).append(pos)
                for zone, positions in fresh.items():
                    heap = heaps[zone]
                    if len(heap) + len(positions) > 2 * len(fc.by_zone[zone]) + 16:
                        heaps[zone] = self._lrp_heap(fc.by_zone[zone], mem, disk)  # mostly leftovers
                        continue
                    for entry in self._lrp_entries(positions, mem, disk):
                        heappush(heap, entry)
        kept.heaps[key] = (kept.auction, heaps)
        return heaps

    # -- LRPs: the zone walk (auction.md 4.2) ---------------------------------------------

    def _choose_lrp(self, item: LRPWork, fc: FilterClass) -> tuple[int, float] | None:
        mem = item.memory_mb
        disk = item.disk_mb
        asked = (fc.id, mem, disk, item.process_guid)
        if self._no_cell is not None and self._no_cell == (asked, self.state.wins):
            return None
        found = self._walk_lrp(item, fc, mem, disk)
        if found is None:
            self._no_cell = (asked, self.state.wins)
        return found

    def _walk_lrp(self, item: LRPWork, fc: FilterClass, mem: int, disk: int) -> tuple[int, float] | None:
        heaps = self._lrp_heaps.get((fc.id, mem, disk))
        if heaps is None:
            heaps = self._lrp_heaps[(fc.id, mem, disk)] = self._lrp_heaps_for(fc, mem, disk)
        guid = item.process_guid
        # The process's own heaps, if it has them yet (most auctions: no process has).
        own = self._guid_heaps.get((fc.id, mem, disk, guid)) if self._guid_heaps else None
        zones = fc.zones
        per_zone = self.state.zone_counts_of(guid)
        if not per_zone or len(zones) == 1:
            if own is not None:
                return self._search_own(zones, own, guid, mem, disk)
            return self._search_group(zones, heaps, guid, mem, disk, fc)
        counts = [per_zone.get(z, 0) for z in zones]
        # Walk the groups of equal counts by ascending count; equal zones are pooled.
        for count in sorted(set(counts)):
            group = [z for z, c in zip(zones, counts, strict=True) if c == count]
            if own is not None:
                found = self._search_own(group, own, guid, mem, disk)
            else:
                found = self._search_group(group, heaps, guid, mem, disk, fc)
            if found is not None:
                return found
        return None

    def _search_group(self, group: list[str], heaps: dict[str, list[LrpEntry]], guid: str,
                      mem: int, disk: int, fclass: FilterClass) -> tuple[int, float] | None:
        st = self.state
        version = st.version
        lrp_counts = st.lrp_counts
        # Locals for the hot loop: a zone failure's batch walks past every cell that
        # already holds a big app's instances, item after item.
        a_mem, a_disk, a_cont = st.a_mem, st.a_disk, st.a_cont
        t_mem, t_disk, t_cont = st.t_mem, st.t_disk, st.t_cont
        starting, proxy, bin_term = st.starting, st.proxy, self.bin_term
        w_start, locality, base = self.w_start, self.locality, self._base
        best_score = INITIAL_BEST
        best_pos = -1  # with the score at 1e20 nothing ties it: 4.5's initial best
        for zone in group:
            heap = heaps[zone]
            held: list[LrpEntry] = []
            while heap:
                score, pos, seen, part = heap[0]
                if score > best_score or (score == best_score and pos > best_pos):
                    break  # every other key here is a lower bound that cannot win
                if seen != version[pos]:
                    if seen < base[pos]:
                        heappop(heap)  # left over from before the cell changed (KeptHeaps)
                        continue
                    mem_eff = mem + proxy[pos]
                    if a_disk[pos] < disk or a_mem[pos] < mem_eff or a_cont[pos] < 1:
                        heappop(heap)  # never fits again in this auction
                        continue
                    # ``_lrp_key`` written out, keeping its resource-and-starting part.
                    fm = 1.0 - (a_mem[pos] - mem_eff) / t_mem[pos]
                    fd = 1.0 - (a_disk[pos] - disk) / t_disk[pos]
                    fc = 1.0 - (a_cont[pos] - 1) / t_cont[pos]
                    part = ((fm + fd) + fc) / 3.0 + starting[pos] * w_start
                    heapreplace(heap, ((part + 0.0) + bin_term[pos], pos, version[pos], part))
                    continue
                n_same = lrp_counts[pos].get(guid)
                if not n_same:
                    best_score, best_pos = score, pos  # exact, and the smallest left
                    break
                # The cell holds the process: its key lacks the locality term. The
                # entry is fresh, so its part is ``_resource_and_starting`` now.
                exact = (part + float(locality * n_same)) + bin_term[pos]
                if exact < best_score or (exact == best_score and pos < best_pos):
                    best_score, best_pos = exact, pos
                held.append(heappop(heap))
            for entry in held:
                heappush(heap, entry)
            if held:
                own_key = (fclass.id, mem, disk, guid)
                pops = self._held_pops.get(own_key, 0) + len(held)
                self._held_pops[own_key] = pops
                if pops >= len(fclass.cells):  # the work of building the process's own heaps
                    self._guid_heaps[own_key] = {
                        z: self._own_heap(p, guid, mem, disk) for z, p in fclass.by_zone.items()}
        if best_pos < 0:
            return None
        return best_pos, best_score

    def _own_key(self, pos: int, guid: str, mem: int, disk: int) -> float | None:
        """``_lrp_key`` with the locality of ``guid``'s instances on the cell: its exact
        score for an item of ``guid`` (the operation order of ``_search_group``)."""
        part = self._lrp_key(pos, mem, disk)
        if part is None:
            return None
        n_same = self.state.lrp_counts[pos].get(guid)
        if not n_same:
            return part
        s = self.state
        mem_eff = mem + s.proxy[pos]
        return ((self._resource_and_starting(pos, mem_eff, disk) + float(self.locality * n_same))
                + self.bin_term[pos])

    def _own_heap(self, positions: list[int], guid: str, mem: int, disk: int) -> list[Entry]:
        return self._heap(positions, lambda pos, m, d: self._own_key(pos, guid, m, d), mem, disk)

    def _search_own(self, group: list[str], heaps: dict[str, list[Entry]], guid: str,
                    mem: int, disk: int) -> tuple[int, float] | None:
        """``_search_group`` over the process's own heaps: their keys are exact scores
        when fresh, so each zone's freshest top is its best (ties: the earlier cell)."""
        version = self.state.version
        best_score = INITIAL_BEST
        best_pos = -1
        for zone in group:
            heap = heaps[zone]
            while heap:
                score, pos, seen = heap[0]
                if score > best_score or (score == best_score and pos > best_pos):
                    break
                if seen != version[pos]:
                    fresh = self._own_key(pos, guid, mem, disk)
                    if fresh is None:
                        heappop(heap)  # never fits again in this auction
                    else:
                        heapreplace(heap, (fresh, pos, version[pos]))
                    continue
                best_score, best_pos = score, pos
                break
        if best_pos < 0:
            return None
        return best_pos, best_score

    # -- tasks: every compatible cell, zones ignored (auction.md 4.3) ---------------------

    def _choose_task(self, item: WorkItem, fc: FilterClass) -> tuple[int, float] | None:
        mem = item.memory_mb
        disk = item.disk_mb
        heap = self._task_heaps.get((fc.id, mem, disk))
        if heap is None:
            heap = self._task_heaps[(fc.id, mem, disk)] = self._heap(
                fc.cells, self._task_key, mem, disk)
        version = self.state.version
        while heap:
            score, pos, seen = heap[0]
            if seen == version[pos]:
                # Locality for tasks is per cell, not per guid: the key is exact.
                return (pos, score) if score < INITIAL_BEST else None
            fresh = self._task_key(pos, mem, disk)
            if fresh is None:
                heappop(heap)
            else:
                heapreplace(heap, (fresh, pos, version[pos]))
        return None
