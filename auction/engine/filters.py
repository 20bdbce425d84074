"""Feasibility: the three filters, the fit check and the placement errors (auction.md 3, 6).

Filters follow ``cloudfoundry/rep: resources.go`` (``MatchRootFS``, ``MatchVolumeDrivers``,
``MatchPlacementTags``); the fit check is ``CellState.ResourceMatch``. Error strings are
the exact ones of auction.md 6.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from .gourl import URLError, parse
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

_PRELOADED_SCHEMES = frozenset({"preloaded", "preloaded+layer"})
PRELOADED_SCHEMES = _PRELOADED_SCHEMES  # for the panel's advice (advice.py)
#: GODEBUG ``urlstrictcolons`` is on only for programs whose go.mod says go >= 1.26;
#: diego-release's says 1.23, so the rep and the BBS take the port after the last colon.
_STRICT_COLONS = False


@lru_cache(maxsize=4096)
def rootfs_target(rootfs: str) -> tuple[str, str | None] | None:
    """What a rootfs asks a cell for, as the rep reads it (auction.md 3.1): ``(scheme,
    stack)`` with the preloaded stack (``None`` for any other scheme), or ``None`` when it
    can match no cell at all.

    The rep parses it with Go's ``url.Parse`` (``MatchRootFS``): a string Go rejects, or
    one without a scheme, matches nothing. A preloaded stack is the URL's opaque part, so
    a path-like one (``preloaded:///x``) names no stack. Cached: the filters ask once per
    (rootfs, cell), and an auction has few distinct rootfses.
    """
    try:
        url = parse(rootfs, strict_colons=_STRICT_COLONS)
    except URLError:
        return None
    if not url.scheme:
        return None
    if url.scheme in _PRELOADED_SCHEMES:
        path_like = not url.opaque and (url.path or url.host or url.user is not None)
        return url.scheme, (None if path_like else url.opaque)
    return url.scheme, None


def rootfs_is_url(rootfs: str) -> bool:
    """bbs.md 1.2 rule 3: Go's ``url.Parse`` accepts it and it has a scheme."""
    return rootfs_target(rootfs) is not None


def match_rootfs(cell: CellState, rootfs: str) -> bool:
    """auction.md 3.1: preloaded stacks by name, any other scheme by provider."""
    target = rootfs_target(rootfs)
    if target is None:
        return False
    scheme, stack = target
    if scheme in _PRELOADED_SCHEMES:
        return stack is not None and stack in cell.preloaded_rootfses
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
    """The first filter the cell fails, in the order of auction.md 3, or ``None``.

    It reads the cell's rootfses, providers, drivers and tags only (``filter_class``
    relies on that)."""
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
