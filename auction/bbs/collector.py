"""Python's cycle collector paused around work on a large, long-lived, acyclic heap.

A convergence pass over a 250,000-row snapshot, a world run or copy of hundreds of
thousands of records, a bulk write: each allocates many small acyclic objects, and every
generation-2 collection would rescan everything alive, often costing more than the work
itself. Reference counting still frees what is dropped; what is left cyclic is found by
the next collection after the block.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
