"""Single-row ActualLRP operations convergence performs (bbs.md 2.3).

Pure: row in, row out. The same functions serve the service layer for the API and
evacuation paths, so convergence and the API cannot drift apart.
"""

from __future__ import annotations

from auction.bbs.errors import BBSError
from auction.bbs.transitions import REFUSALS
from auction.bbs.types import CLAIMED, ORDINARY, SUSPECT, UNCLAIMED, ActualLRP, evolve


def new_unclaimed(
    process_guid: str, index: int, domain: str, now: float, epoch: str = ""
) -> ActualLRP:
    """A fresh ORDINARY UNCLAIMED row: ``since`` = now, crash count 0, a new tag epoch."""
    return ActualLRP(
        process_guid=process_guid,
        index=index,
        state=UNCLAIMED,
        presence=ORDINARY,
        domain=domain,
        since=now,
        modification_tag_epoch=epoch,
    )


def unclaim(row: ActualLRP, now: float, *, stale_mode: bool = False) -> ActualLRP | BBSError:
    """Unclaim (bbs.md 2.3): to UNCLAIMED with key and net info cleared, ``since`` =
    now, tag + 1; crash count, crash reason and placement error kept. Refused when
    already UNCLAIMED, and in "stale" mode also when CLAIMED."""
    if row.state == UNCLAIMED or (stale_mode and row.state == CLAIMED):
        return REFUSALS[UNCLAIMED]
    return evolve(
        row,
        state=UNCLAIMED,
        instance_guid="",
        cell_id="",
        address="",
        ports=(),
        since=now,
        modification_tag_index=row.modification_tag_index + 1,
    )


def to_suspect(row: ActualLRP) -> ActualLRP:
    """ORDINARY -> SUSPECT: keeps its key, state, ``since`` and tag (bbs.md 2.3, 6.2),
    so routing can go on during a partition."""
    return evolve(row, presence=SUSPECT)


def promote(suspect: ActualLRP) -> ActualLRP:
    """SUSPECT -> ORDINARY once its cell is back (bbs.md 2.3 PromoteSuspect)."""
    return evolve(suspect, presence=ORDINARY)
