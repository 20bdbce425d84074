"""Feasibility: the three filters, the fit check and the placement errors (auction.md 3, 6).

Filters follow ``cloudfoundry/rep: resources.go`` (``MatchRootFS``, ``MatchVolumeDrivers``,
``MatchPlacementTags``); the fit check is ``CellState.ResourceMatch``. Error strings are
the exact ones of auction.md 6.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .types import CellState

ERR_NO_CELLS = "unable to communicate to compatible cells"
ERR_IN_FLIGHT = "waiting to start instance: reached in-flight start limit"
ERR_ROOTFS = "found no compatible cell for required rootfs"
ERR_VOLUME_DRIVERS = "found no compatible cell with required volume drivers"
ERR_COMMIT_REJECTED = ""

PROBLEM_CONTAINERS = "containers"
PROBLEM_DISK = "disk"
PROBLEM_MEMORY = "memory"
ALL_PROBLEMS = frozenset({PROBLEM_CONTAINERS, PROBLEM_DISK, PROBLEM_MEMORY})

FILTER_ROOTFS = "rootfs"
FILTER_VOLUME_DRIVERS = "volume_drivers"
FILTER_PLACEMENT_TAGS = "placement_tags"

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*\Z")
_PRELOADED_SCHEMES = frozenset({"preloaded", "preloaded+layer"})


def match_rootfs(cell: CellState, rootfs: str) -> bool:
    """auction.md 3.1: preloaded stacks by name, any other scheme by provider."""
    scheme, colon, rest = rootfs.partition(":")
    if not colon or not _SCHEME.match(scheme):
        return False  # no valid scheme: no match
    scheme = scheme.lower()
    if scheme in _PRELOADED_SCHEMES:
        stack = rest
        for stop in ("?", "#"):
            stack = stack.split(stop, 1)[0]
        # A path-like stack ("preloaded:///x") never names a preloaded rootfs.
        return not stack.startswith("/") and stack in cell.preloaded_rootfses
    return scheme in cell.rootfs_providers


def match_volume_drivers(cell: CellState, drivers: Sequence[str]) -> bool:
    """auction.md 3.2: every requested driver is on the cell; an empty request matches."""
    return all(d in cell.volume_drivers for d in drivers)


def match_placement_tags(cell: CellState, tags: Sequence[str]) -> bool:
    """auction.md 3.3: R ⊆ D and D ⊆ R ∪ O, as sets."""
    required = set(cell.placement_tags)
    wanted = set(tags)
    return required <= wanted <= required | set(cell.optional_placement_tags)


def failed_filter(
    cell: CellState, rootfs: str, drivers: Sequence[str], tags: Sequence[str]
) -> str | None:
    """The first filter the cell fails, in the order of auction.md 3, or ``None``."""
    if not match_rootfs(cell, rootfs):
        return FILTER_ROOTFS
    if not match_volume_drivers(cell, drivers):
        return FILTER_VOLUME_DRIVERS
    if not match_placement_tags(cell, tags):
        return FILTER_PLACEMENT_TAGS
    return None


def placement_tag_error(tags: Sequence[str]) -> str:
    """``PlacementTagMismatchError``: tags quoted, in request order (auction.md 6)."""
    quoted = [f'"{t}"' for t in tags]
    if not quoted:
        return "found no compatible cell with no placement tags"
    if len(quoted) == 1:
        return f"found no compatible cell with placement tag {quoted[0]}"
    return f"found no compatible cell with placement tags {', '.join(quoted[:-1])} and {quoted[-1]}"


def filter_error(
    cells: Iterable[CellState], rootfs: str, drivers: Sequence[str], tags: Sequence[str]
) -> str:
    """The global filter-error rule of auction.md 6.3 for an item no cell is compatible with.

    Zones play no part [project rule]: Diego's per-zone merge is order-dependent.
    """
    by_rootfs = [c for c in cells if match_rootfs(c, rootfs)]
    if not by_rootfs:
        return ERR_ROOTFS
    if not any(match_volume_drivers(c, drivers) for c in by_rootfs):
        return ERR_VOLUME_DRIVERS
    return placement_tag_error(tags)


def fit_problems(
    avail_memory: int, avail_disk: int, avail_containers: int, memory_eff: int, disk: int
) -> frozenset[str]:
    """``CellState.ResourceMatch`` (auction.md 3): the resources the cell lacks."""
    problems = set()
    if avail_disk < disk:
        problems.add(PROBLEM_DISK)
    if avail_memory < memory_eff:
        problems.add(PROBLEM_MEMORY)
    if avail_containers < 1:
        problems.add(PROBLEM_CONTAINERS)
    return frozenset(problems)


def insufficient_resources_error(problems: Iterable[str]) -> str:
    """``InsufficientResourcesError``: the common problems, sorted, joined by ", "."""
    names = sorted(problems)
    if not names:
        return "insufficient resources"
    return "insufficient resources: " + ", ".join(names)
