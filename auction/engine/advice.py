"""The smallest change that would let an unplaced item fit (dashboard.md G9).

Honest by construction: a change is offered only when it can work. Every filter of
auction.md 3 is considered (a cell lacking the stack, a volume driver or a placement tag
is fixable by configuring that cell), and no cell is asked to free more than it has in
all: an item larger than a cell's total can never run there, however much is freed.
When no existing cell can ever host the item, the answer is a new cell with the size and
the rootfs, drivers and tags it needs. Pure: cells and the item in, words out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .filters import PRELOADED_SCHEMES, fit_problems, match_rootfs, rootfs_target
from .types import CellState

ROOTFS_FORMS = "preloaded:<stack> (e.g. preloaded:cflinuxfs4) or docker:///<image>"


@dataclass(frozen=True, slots=True)
class Need:
    """What an item asks of a cell. ``proxy``: an LRP also needs the cell's proxy memory."""

    memory_mb: int
    disk_mb: int
    rootfs: str
    volume_drivers: tuple[str, ...] = ()
    placement_tags: tuple[str, ...] = ()
    proxy: bool = True


@dataclass(frozen=True, slots=True)
class CellAdvice:
    cell_id: str
    fits_now: bool
    possible: bool  # some change to this cell lets the item fit
    change: str  # what to change, or why nothing on this cell can work
    cost: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)


def _plural(words: Sequence[str], one: str, many: str) -> str:
    return f"{one if len(words) == 1 else many} {', '.join(words)}"


def _configuration(cell: CellState, need: Need) -> list[str] | None:
    """The configuration changes on ``cell`` its filters need; ``None``: none can help."""
    changes: list[str] = []
    if not match_rootfs(cell, need.rootfs):
        target = rootfs_target(need.rootfs)
        if target is None:
            return None
        scheme, stack = target
        if scheme in PRELOADED_SCHEMES:
            if stack is None:
                return None
            changes.append(f"add {stack} to {cell.cell_id}")
        else:
            changes.append(f"add the {scheme} rootfs provider to {cell.cell_id}")
    drivers = [d for d in need.volume_drivers if d not in cell.volume_drivers]
    if drivers:
        changes.append(f"add {_plural(drivers, 'volume driver', 'volume drivers')} to {cell.cell_id}")
    required = set(cell.placement_tags)
    wanted = set(need.placement_tags)
    unasked = sorted(required - wanted)
    if unasked:
        changes.append(f"drop required {_plural(unasked, 'tag', 'tags')} from {cell.cell_id}")
    unknown = sorted(wanted - required - set(cell.optional_placement_tags))
    if unknown:
        changes.append(f"add {_plural(unknown, 'placement tag', 'placement tags')} to {cell.cell_id}")
    return changes


def cell_advice(cell: CellState, need: Need) -> CellAdvice:
    """What it would take for ``cell`` to host the item, or why it never can."""
    config = _configuration(cell, need)
    memory = need.memory_mb + (cell.proxy_memory_mb if need.proxy else 0)
    if config is None:
        return CellAdvice(cell.cell_id, False, False,
                          f"rootfs {need.rootfs!r} matches no cell: expected {ROOTFS_FORMS}")
    too_big = []
    if memory > cell.total.memory_mb:
        too_big.append(f"{memory} MB memory (it has {cell.total.memory_mb} MB in all)")
    if need.disk_mb > cell.total.disk_mb:
        too_big.append(f"{need.disk_mb} MB disk (it has {cell.total.disk_mb} MB in all)")
    if cell.total.containers < 1:
        too_big.append("a container (it has none)")
    if too_big:
        return CellAdvice(cell.cell_id, False, False,
                          f"never fits {cell.cell_id}: needs {' and '.join(too_big)}")
    lacks = fit_problems(cell.available.memory_mb, cell.available.disk_mb,
                         cell.available.containers, memory, need.disk_mb)
    if not config and not lacks:
        return CellAdvice(cell.cell_id, True, True, "")
    short_mem = max(0, memory - cell.available.memory_mb)
    short_disk = max(0, need.disk_mb - cell.available.disk_mb)
    short_cont = max(0, 1 - cell.available.containers)
    freed = [f"{n} {what}" for n, what in ((short_mem, "MB memory"), (short_disk, "MB disk"),
                                           (short_cont, "container")) if n]
    steps = list(config)
    if freed:
        steps.append(f"free {' and '.join(freed)} on {cell.cell_id}")
    return CellAdvice(cell.cell_id, False, True, " and ".join(steps),
                      (len(config), len(freed), short_mem, short_disk, short_cont))


def new_cell(cells: Sequence[CellState], need: Need) -> str:
    """The cell to add when no existing one can ever host the item."""
    target = rootfs_target(need.rootfs)
    if target is None or (target[0] in PRELOADED_SCHEMES and target[1] is None):
        return f"none can work: rootfs {need.rootfs!r} matches no cell; expected {ROOTFS_FORMS}"
    proxy = max((c.proxy_memory_mb for c in cells), default=0) if need.proxy else 0
    size = [f">= {need.memory_mb + proxy} MB memory"]
    if need.disk_mb > max((c.total.disk_mb for c in cells), default=0):
        size.append(f">= {need.disk_mb} MB disk")
    scheme, stack = target
    words = [f"add a cell of {' and '.join(size)}",
             f"with {stack}" if stack else f"with the {scheme} rootfs provider"]
    if need.volume_drivers:
        words.append(_plural(list(need.volume_drivers), "and volume driver", "and volume drivers"))
    if need.placement_tags:
        words.append(_plural(list(need.placement_tags), "and placement tag", "and placement tags"))
    return " ".join(words)


def smallest_change(cells: Sequence[CellState], need: Need) -> tuple[str, list[CellAdvice]]:
    """The smallest change that can make the item fit, and each cell's own advice.

    Smallest: fewest configuration changes, then fewest kinds of resource to free, then
    the least memory, disk and containers to free; ties go to the first cell listed."""
    advice = [cell_advice(cell, need) for cell in cells]
    if not cells:
        return "no cell answers: restore a cell", advice
    if any(a.fits_now for a in advice):
        return "none needed: a cell fits now; the next auction that includes it should place it", advice
    possible = [a for a in advice if a.possible]
    if possible:
        return min(possible, key=lambda a: a.cost).change, advice
    return new_cell(cells, need), advice
