"""LRP convergence, selection phase (bbs.md 4.2; ``db/sqldb/lrp_convergence.go``).

One linear walk over the ActualLRP rows sorts each row into the categories of steps
0a-10 as lists of keys; ``lrp_actions.py`` then applies the lists in the project
order. Nothing here writes: the lists, the row each key was selected from, and the
counts the metrics need are the whole answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from auction.bbs.restart import should_restart
from auction.bbs.types import (
    CLAIMED,
    CRASHED,
    EVACUATING,
    ORDINARY,
    RUNNING,
    SUSPECT,
    UNCLAIMED,
    ActualLRP,
    DesiredLRP,
    LRPKey,
    RowKey,
    Snapshot,
    fresh_domains,
)


@dataclass(slots=True)
class LRPSelection:
    """The categories of bbs.md 4.2, as (process_guid, index) lists in row order."""

    fresh: frozenset[str]  # domains fresh at now (the gate of bbs.md 4.4)
    pruned_domains: list[str] = field(default_factory=list)  # 0a
    remove_evacuating: list[ActualLRP] = field(default_factory=list)  # 0b, the rows
    stale_unclaimed: list[LRPKey] = field(default_factory=list)  # 1 -> unstarted
    missing_cell_keys: list[LRPKey] = field(default_factory=list)  # 2, ORDINARY rows
    missing_cell_ids: set[str] = field(default_factory=set)  # 2, suspects too
    missing: list[LRPKey] = field(default_factory=list)  # 3
    to_retire: list[LRPKey] = field(default_factory=list)  # 3 fresh extras, then 4
    suspects_to_remove: list[LRPKey] = field(default_factory=list)  # 5, then 6
    to_promote: list[LRPKey] = field(default_factory=list)  # 7
    suspect_set: set[LRPKey] = field(default_factory=set)  # 8 + 9
    suspect_running: int = 0  # 8
    suspect_claimed: int = 0  # 9
    crashed_ready: list[LRPKey] = field(default_factory=list)  # 10 -> unstarted
    extras_stale: int = 0  # extras found but kept because their domain is stale
    desired_instances: int = 0  # LRPsDesired
    desired: dict[str, DesiredLRP] = field(default_factory=dict)
    # The rows as the selection saw them, after 0b, for the actions to re-read
    # against. No index of the whole table is built (it would cost more than the
    # selection itself at 250,000 rows): ORDINARY rows are grouped by guid, and the
    # ones a list names are kept by key in ``found``.
    ordinary_by_guid: dict[str, list[ActualLRP]] = field(default_factory=dict)
    found: dict[RowKey, ActualLRP] = field(default_factory=dict)
    suspects: dict[LRPKey, ActualLRP] = field(default_factory=dict)
    evacuating: dict[LRPKey, ActualLRP] = field(default_factory=dict)
    # Ordinary rows by state and ordinary CRASHED rows by guid, before the actions:
    # the metrics adjust these by the actions' changes instead of recounting.
    ordinary_by_state: Counter[str] = field(default_factory=Counter)
    crashed_by_guid: Counter[str] = field(default_factory=Counter)

    @property
    def unstarted(self) -> list[LRPKey]:
        """Steps 1 and 10 together: the rows A5 starts."""
        return self.stale_unclaimed + self.crashed_ready

    def row_at(self, key: RowKey) -> ActualLRP | None:
        """The row stored under ``key`` before the actions (after 0b), or None."""
        guid, index, presence = key
        if presence == SUSPECT:
            return self.suspects.get((guid, index))
        if presence == EVACUATING:
            return self.evacuating.get((guid, index))
        row = self.found.get(key)
        if row is not None:
            return row
        # Rare: only suspect-related lookups reach here; a guid has ~instances rows.
        for row in self.ordinary_by_guid.get(guid, ()):
            if row.index == index:
                return row
        return None


def select(snapshot: Snapshot, part: Mapping[str, tuple[list[ActualLRP], int]] | None = None) -> LRPSelection:
    """Steps 0a-10 of bbs.md 4.2 at ``snapshot.now``; linear in rows + desired.

    ``part`` is a part of the selection made before (bbs.md 4.5): apps whose rows, left
    out of ``snapshot.actual``, are all ORDINARY, CLAIMED or RUNNING on a cell of C, as
    many as the app's instances (guid -> those rows in key order, how many are CLAIMED).
    Such apps are in no list: their rows join the ORDINARY rows and the counts."""
    now = snapshot.now
    cells = snapshot.cells
    no_cells = not cells
    desired = {d.process_guid: d for d in snapshot.desired}
    fresh = fresh_domains(snapshot.domains, now)
    sel = LRPSelection(fresh=fresh, desired=desired)
    # 0a: expiry <= now is gone (fresh is the strict expiry > now, bbs.md 5).
    sel.pruned_domains = [
        name for name, expiry in snapshot.domains.items() if expiry is not None and expiry <= now
    ]
    sel.desired_instances = sum(d.instances for d in snapshot.desired)
    stale_before = now - snapshot.config.stale_unclaimed_s
    by_guid: dict[str, list[ActualLRP]] = {}
    found = sel.found
    suspects = sel.suspects
    running_suspects: list[LRPKey] = []
    orphans: list[LRPKey] = []
    by_state: dict[str, int] = {}  # a plain dict in the loop, the Counter after it
    crashed_by_guid = sel.crashed_by_guid
    # An app's rows come together (rows in key order): its list and whether it is desired
    # are looked up once per app, not per row (any order still gives the same answer).
    last_guid: str | None = None
    rows_of: list[ActualLRP] = []
    is_desired = False

    # The hot loop of the pass (250,000 rows at the target size): the common row,
    # ORDINARY RUNNING with a desired LRP on a present cell, takes the shortest path.
    for row in snapshot.actual:
        presence = row.presence
        guid = row.process_guid
        state = row.state
        if presence == ORDINARY:
            if guid != last_guid:
                last_guid = guid
                rows_of = by_guid.setdefault(guid, [])
                is_desired = guid in desired
            rows_of.append(row)
            by_state[state] = by_state.get(state, 0) + 1
            if is_desired:
                if state == RUNNING or state == CLAIMED:
                    cell_id = row.cell_id
                    # 2: cell not in C and not empty; with C = {} every such row.
                    if no_cells or (cell_id not in cells and cell_id != ""):
                        sel.missing_cell_keys.append(_listed(found, row))
                        sel.missing_cell_ids.add(cell_id)
                elif state == UNCLAIMED:
                    if row.since < stale_before:  # 1: strict (bbs.md 10)
                        sel.stale_unclaimed.append(_listed(found, row))
                elif state == CRASHED:
                    crashed_by_guid[guid] += 1
                    # 10 ignores the index: a crashed extra in a stale domain restarts.
                    if should_restart(row.crash_count, row.since, now):
                        sel.crashed_ready.append(_listed(found, row))
            else:
                if state == CRASHED:
                    crashed_by_guid[guid] += 1
                if row.domain in fresh:
                    orphans.append(_listed(found, row))  # 4, by the row's own domain
        elif presence == SUSPECT:
            lrp_key = (guid, row.index)
            suspects[lrp_key] = row
            cell_id = row.cell_id
            has_desired = guid in desired
            if not has_desired and row.domain in fresh:
                sel.suspects_to_remove.append(lrp_key)  # 5
            if state == RUNNING or state == CLAIMED:
                if has_desired and (no_cells or (cell_id not in cells and cell_id != "")):
                    sel.missing_cell_ids.add(cell_id)  # 2: suspects name lost cells too
                sel.suspect_set.add(lrp_key)
                if state == RUNNING:
                    sel.suspect_running += 1  # 8
                    running_suspects.append(lrp_key)
                else:
                    sel.suspect_claimed += 1  # 9
            if not no_cells and cell_id in cells:
                sel.to_promote.append(lrp_key)  # 7
        elif no_cells or row.cell_id not in cells:
            # 0b: an EVACUATING copy whose cell is gone serves nobody; not gated. It
            # takes part in no other step, and the steps below never see it.
            sel.remove_evacuating.append(row)
        else:
            sel.evacuating[(guid, row.index)] = row
    if part:
        _merge(part, by_guid, by_state)
    sel.ordinary_by_guid = by_guid
    sel.ordinary_by_state.update(by_state)  # empty until now: the same counts

    # 3: only when the count of ORDINARY rows differs from instances, hence the
    # index-misalignment blind spot of bbs.md 10 (rows 0 and 5 for instances 2).
    for d in snapshot.desired:
        rows = by_guid.get(d.process_guid, ())
        if len(rows) == d.instances:
            continue
        present = {row.index for row in rows}
        sel.missing.extend((d.process_guid, i) for i in range(d.instances) if i not in present)
        extras = sorted((row for row in rows if row.index >= d.instances), key=_index)
        if d.domain in fresh:
            sel.to_retire.extend(_listed(found, row) for row in extras)
        else:
            sel.extras_stale += len(extras)
    sel.to_retire.extend(orphans)
    # 6: a suspect whose ORDINARY copy also runs is redundant; not gated.
    already = set(sel.suspects_to_remove)
    for guid, index in running_suspects:
        ordinary = sel.row_at((guid, index, ORDINARY))
        if ordinary is not None and ordinary.state == RUNNING and (guid, index) not in already:
            sel.suspects_to_remove.append((guid, index))
    return sel


def _merge(part: Mapping[str, tuple[list[ActualLRP], int]], by_guid: dict[str, list[ActualLRP]],
           by_state: dict[str, int]) -> None:
    claimed = running = 0
    for guid, (rows, n_claimed) in part.items():
        by_guid[guid] = rows
        claimed += n_claimed
        running += len(rows) - n_claimed
    if running:
        by_state[RUNNING] = by_state.get(RUNNING, 0) + running
    if claimed:
        by_state[CLAIMED] = by_state.get(CLAIMED, 0) + claimed


def _listed(found: dict[RowKey, ActualLRP], row: ActualLRP) -> LRPKey:
    """Remember the ORDINARY row a list names, for the action to re-read against."""
    found[(row.process_guid, row.index, ORDINARY)] = row
    return (row.process_guid, row.index)


def _index(row: ActualLRP) -> int:
    return row.index
