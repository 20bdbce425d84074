"""Plain apps: a part of an LRP selection a store may hand the next pass pre-built (bbs.md 4.5).

An app is plain in a selection when every row of it is ORDINARY, CLAIMED or RUNNING on a
cell of C, the app is desired, and its rows are as many as its instances. Such an app
lands in no list of any step of bbs.md 4.2 (neither the clock, the domains nor the config
reach it): it only adds its rows to ``ordinary_by_guid`` and its states to the counts.
So while its rows are the same, the cells of C still hold them and the desired LRPs are
the very same, the next selection over the other rows with this part merged in
(``lrp_convergence.select``'s ``part``) is the selection over every row: a pass at 100,000 rows with a few hundred
written since reads only those. The store says which apps' rows were written since and
leaves the rest out of the snapshot; ``selection_plain_apps`` gives the part for the next pass.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from operator import is_

from auction.bbs.lrp_convergence import LRPSelection
from auction.bbs.types import CLAIMED, RUNNING, ActualLRP, DesiredLRP


@dataclass(slots=True)
class PlainApps:
    """The plain apps of a selection over ``cells`` and ``desired`` (see the module
    docstring): guid -> (its ORDINARY rows in key order, how many of them are CLAIMED)."""

    cells: frozenset[str]
    desired: Sequence[DesiredLRP]
    apps: dict[str, tuple[list[ActualLRP], int]]

    def holds_for(self, cells: frozenset[str], desired: Sequence[DesiredLRP]) -> bool:
        """Whether these apps are still plain for a pass over ``cells`` and ``desired``
        when their rows are the same: no cell of theirs gone from C (a cell that joined C
        makes no row less plain), and the very same desired LRPs."""
        return (bool(cells) and self.cells <= cells and len(self.desired) == len(desired)
                and all(map(is_, self.desired, desired)))

    def without(self, written: Collection[str]) -> PlainApps:
        """The part for the apps none of whose rows was written, added or removed since."""
        if not written:
            return self
        return PlainApps(self.cells, self.desired, {g: a for g, a in self.apps.items() if g not in written})


def selection_plain_apps(sel: LRPSelection, cells: frozenset[str], desired: Sequence[DesiredLRP],
                         part: PlainApps | None) -> PlainApps | None:
    """The plain apps of ``sel`` (made over ``cells`` and ``desired``, merged with
    ``part``): the part's, and those read whose every row is plain. None with C empty
    (no row is on a cell of C)."""
    if not cells:
        return None
    apps = dict(part.apps) if part is not None else {}
    copies = {guid for guid, _ in sel.suspects} | {guid for guid, _ in sel.evacuating}
    copies.update(row.process_guid for row in sel.remove_evacuating)
    wanted = sel.desired
    for guid, rows in sel.ordinary_by_guid.items():
        if guid in apps or guid in copies:
            continue
        d = wanted.get(guid)
        if d is None or len(rows) != d.instances:
            continue
        n_claimed = 0
        for row in rows:
            state = row.state
            if (state != RUNNING and state != CLAIMED) or row.cell_id not in cells:
                break
            n_claimed += state == CLAIMED
        else:
            apps[guid] = (rows, n_claimed)
    return PlainApps(cells, desired, apps)
