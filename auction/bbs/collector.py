"""Python's cycle collector paused around work on a large, long-lived, acyclic heap.

A convergence pass over a 250,000-row snapshot, a world run or copy of hundreds of
thousands of records, a bulk write: each allocates many small acyclic objects, and every
generation-2 collection would rescan everything alive, often costing more than the work
itself. Reference counting still frees what is dropped.

What a large block leaves alive is long-lived too (a world's rows and event log, a copy).
Once the block made more than ``PROMOTE_AFTER`` objects the collector would track, they
join the oldest generation at once (``gc.freeze`` then ``gc.unfreeze``, which moves every
tracked object there) instead of being traced by the next young collection and again by
the one after: at the end of a 600 s run on 100,000 instances that first collection took
half a second to find a million objects all alive. What such a block left cyclic is
found by the next full collection; after a smaller block, by the next collection, as
before. (``gc.unfreeze`` would also release what someone else froze: nothing here does.)
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: Objects made (net) during a block above which they join the oldest generation at once.
PROMOTE_AFTER = 100_000


@contextmanager
def collector_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_count()[0] > PROMOTE_AFTER:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
