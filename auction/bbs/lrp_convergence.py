"""LRP convergence, selection phase (bbs.md 4.2; ``db/sqldb/lrp_convergence.go``).

One linear walk over the ActualLRP rows sorts each row into the categories of steps
0a-10 as lists of keys; ``lrp_actions.py`` then applies the lists in the project
order. Nothing here writes: the lists, the row each key was selected from, and the
counts the metrics need are the whole answer.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from auction.bbs.restart import should_restart
from auction.bbs.types import (
    CLAIMED,
    CRASHED,
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
    # Every row left after 0b, by key: what each action re-reads against.
    rows: dict[RowKey, ActualLRP] = field(default_factory=dict)
    desired: dict[str, DesiredLRP] = field(default_factory=dict)
    # Ordinary rows by state and ordinary CRASHED rows by guid, before the actions:
    # the metrics adjust these by the actions' changes instead of recounting.
    ordinary_by_state: Counter[str] = field(default_factory=Counter)
    crashed_by_guid: Counter[str] = field(default_factory=Counter)

    @property
    def unstarted(self) -> list[LRPKey]:
        """Steps 1 and 10 together: the rows A5 starts."""
        return self.stale_unclaimed + self.crashed_ready


def select(snapshot: Snapshot) -> LRPSelection:
    """Steps 0a-10 of bbs.md 4.2 at ``snapshot.now``; linear in rows + desired."""
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

    rows = sel.rows
    ordinary_indices: defaultdict[str, list[int]] = defaultdict(list)
    running_suspects: list[LRPKey] = []
    orphans: list[LRPKey] = []
    by_state = sel.ordinary_by_state
    crashed_by_guid = sel.crashed_by_guid

    # The hot loop of the pass (250,000 rows at the target size): the common row,
    # ORDINARY with a desired LRP, takes the shortest path.
    for row in snapshot.actual:
        presence = row.presence
        guid = row.process_guid
        index = row.index
        state = row.state
        if presence == ORDINARY:
            rows[(guid, index, ORDINARY)] = row
            by_state[state] += 1
            if guid in desired:
                ordinary_indices[guid].append(index)
                if state == RUNNING or state == CLAIMED:
                    cell_id = row.cell_id
                    # 2: cell not in C and not empty; with C = {} every such row.
                    if no_cells or (cell_id not in cells and cell_id != ""):
                        sel.missing_cell_keys.append((guid, index))
                        sel.missing_cell_ids.add(cell_id)
                elif state == UNCLAIMED:
                    if row.since < stale_before:  # 1: strict (bbs.md 10)
                        sel.stale_unclaimed.append((guid, index))
                elif state == CRASHED:
                    crashed_by_guid[guid] += 1
                    # 10 ignores the index: a crashed extra in a stale domain restarts.
                    if should_restart(row.crash_count, row.since, now):
                        sel.crashed_ready.append((guid, index))
            else:
                if state == CRASHED:
                    crashed_by_guid[guid] += 1
                if row.domain in fresh:
                    orphans.append((guid, index))  # 4, gated by the row's own domain
        elif presence == SUSPECT:
            rows[(guid, index, SUSPECT)] = row
            cell_id = row.cell_id
            has_desired = guid in desired
            if not has_desired and row.domain in fresh:
                sel.suspects_to_remove.append((guid, index))  # 5
            if state == RUNNING or state == CLAIMED:
                if has_desired and (no_cells or (cell_id not in cells and cell_id != "")):
                    sel.missing_cell_ids.add(cell_id)  # 2: suspects name lost cells too
                sel.suspect_set.add((guid, index))
                if state == RUNNING:
                    sel.suspect_running += 1  # 8
                    running_suspects.append((guid, index))
                else:
                    sel.suspect_claimed += 1  # 9
            if not no_cells and cell_id in cells:
                sel.to_promote.append((guid, index))  # 7
        elif no_cells or row.cell_id not in cells:
            # 0b: an EVACUATING copy whose cell is gone serves nobody; not gated. It
            # takes part in no other step, and the steps below never see it.
            sel.remove_evacuating.append(row)
        else:
            rows[(guid, index, presence)] = row

    # 3: only when the count of ORDINARY rows differs from instances, hence the
    # index-misalignment blind spot of bbs.md 10 (rows 0 and 5 for instances 2).
    for d in snapshot.desired:
        indices = ordinary_indices.get(d.process_guid, ())
        if len(indices) == d.instances:
            continue
        present = set(indices)
        sel.missing.extend((d.process_guid, i) for i in range(d.instances) if i not in present)
        extras = sorted(i for i in present if i >= d.instances)
        if d.domain in fresh:
            sel.to_retire.extend((d.process_guid, i) for i in extras)
        else:
            sel.extras_stale += len(extras)
    sel.to_retire.extend(orphans)
    # 6: a suspect whose ORDINARY copy also runs is redundant; not gated.
    already = set(sel.suspects_to_remove)
    for guid, index in running_suspects:
        ordinary = rows.get((guid, index, ORDINARY))
        if ordinary is not None and ordinary.state == RUNNING and (guid, index) not in already:
            sel.suspects_to_remove.append((guid, index))
    return sel
