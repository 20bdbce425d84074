"""LRP convergence, selection phase (bbs.md 4.2; ``db/sqldb/lrp_convergence.go``).

One linear walk over the ActualLRP rows sorts each row into the categories of steps
0a-10 as lists of keys; ``lrp_actions.py`` then applies the lists in the project
order. Nothing here writes: the lists, the row each key was selected from, and the
counts the metrics need are the whole answer.
"""

from __future__ import annotations

from collections import Counter
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
    ordinary_indices: dict[str, list[int]] = {}
    ordinary_running: set[LRPKey] = set()
    running_suspects: list[LRPKey] = []
    orphans: list[LRPKey] = []
    by_state = sel.ordinary_by_state
    crashed_by_guid = sel.crashed_by_guid

    for row in snapshot.actual:
        presence = row.presence
        guid = row.process_guid
        state = row.state
        cell_id = row.cell_id
        if presence == EVACUATING:
            # 0b: an evacuating copy whose cell is gone serves nobody; not gated.
            if no_cells or cell_id not in cells:
                sel.remove_evacuating.append(row)
            else:
                rows[(guid, row.index, presence)] = row
            continue  # EVACUATING rows take part in no other step
        rows[(guid, row.index, presence)] = row
        lrp_key = (guid, row.index)
        has_desired = guid in desired
        claimed_or_running = state == RUNNING or state == CLAIMED
        # 2: "cell not in C and not empty", and with C = {} every such row.
        on_missing_cell = claimed_or_running and (
            no_cells or (cell_id != "" and cell_id not in cells)
        )
        if presence == ORDINARY:
            by_state[state] += 1
            if state == CRASHED:
                crashed_by_guid[guid] += 1
            if state == RUNNING:
                ordinary_running.add(lrp_key)
            if not has_desired:
                if row.domain in fresh:
                    orphans.append(lrp_key)  # 4, gated by the row's own domain
                continue
            ordinary_indices.setdefault(guid, []).append(row.index)
            if state == UNCLAIMED:
                if row.since < stale_before:  # 1: strict (bbs.md 10)
                    sel.stale_unclaimed.append(lrp_key)
            elif state == CRASHED:
                # 10: ignores the index, so a crashed extra in a stale domain restarts.
                if should_restart(row.crash_count, row.since, now):
                    sel.crashed_ready.append(lrp_key)
            elif on_missing_cell:
                sel.missing_cell_keys.append(lrp_key)
                sel.missing_cell_ids.add(cell_id)
        elif presence == SUSPECT:
            if not has_desired and row.domain in fresh:
                sel.suspects_to_remove.append(lrp_key)  # 5
            if claimed_or_running:
                if has_desired and on_missing_cell:
                    sel.missing_cell_ids.add(cell_id)  # 2: suspects name lost cells too
                sel.suspect_set.add(lrp_key)
                if state == RUNNING:
                    sel.suspect_running += 1  # 8
                    running_suspects.append(lrp_key)
                else:
                    sel.suspect_claimed += 1  # 9
            if not no_cells and cell_id in cells:
                sel.to_promote.append(lrp_key)  # 7

    # 3: only when the count of ORDINARY rows differs from instances, hence the
    # index-misalignment blind spot of bbs.md 10 (rows 0 and 5 for instances 2).
    for d in snapshot.desired:
        indices = ordinary_indices.get(d.process_guid, ())
        if len(indices) == d.instances:
            continue
        present = set(indices)
        sel.missing.extend(
            (d.process_guid, i) for i in range(d.instances) if i not in present
        )
        extras = sorted(i for i in present if i >= d.instances)
        if d.domain in fresh:
            sel.to_retire.extend((d.process_guid, i) for i in extras)
        else:
            sel.extras_stale += len(extras)
    sel.to_retire.extend(orphans)
    # 6: a suspect whose ORDINARY copy also runs is redundant; not gated.
    already = set(sel.suspects_to_remove)
    sel.suspects_to_remove.extend(
        key for key in running_suspects if key in ordinary_running and key not in already
    )
    return sel
