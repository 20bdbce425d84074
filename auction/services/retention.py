"""How many auction and convergence records are kept (bbs.md 8.2).

Every auction keeps a replay record (tens of KB) and every pass a record of its lists and
gauges: a wall screen left running at max speed for a week grew the database without
bound. Like the event log, the records are trimmed to the newest ``DIEGO_AUCTIONS_KEEP``
auctions and ``DIEGO_PASSES_KEEP`` passes, and an auction whose fetch began more than
``DIEGO_RECORDS_MAX_AGE_DAYS`` ago (wall time) goes too. Trimmed after an advance that
wrote records, by the id cutoff the event log uses (one indexed delete each).
"""

from __future__ import annotations

import time

from django.conf import settings
from django.db.models import Model

from auction.models import AuctionRun, ConvergenceRun


def _keep_newest(model: type[Model], keep: int) -> int:
    beyond = model.objects.order_by("-id").values_list("id", flat=True)[keep:keep + 1]  # type: ignore[attr-defined]
    cutoff = next(iter(beyond), None)
    if cutoff is None:
        return 0
    deleted, _ = model.objects.filter(id__lte=cutoff).delete()  # type: ignore[attr-defined]
    return int(deleted)


def records_trim(*, auctions: bool = True, passes: bool = True, now: float | None = None) -> int:
    """Trim the records of the kinds an advance just wrote; returns how many went."""
    deleted = 0
    if auctions:
        deleted += _keep_newest(AuctionRun, settings.DIEGO_AUCTIONS_KEEP)
        oldest = (time.time() if now is None else now) - settings.DIEGO_RECORDS_MAX_AGE_DAYS * 86400
        # wall_started 0: a record from before the field existed, kept by count only.
        deleted += AuctionRun.objects.filter(wall_started__gt=0, wall_started__lt=oldest).delete()[0]
    if passes:
        deleted += _keep_newest(ConvergenceRun, settings.DIEGO_PASSES_KEEP)
    return deleted
