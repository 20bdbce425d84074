"""The cycle collector paused around a block (``auction.bbs.collector``): it runs again
after the block, and what the block left cyclic is still found, promoted or not."""

from __future__ import annotations

import gc
import weakref

from auction.bbs.collector import PROMOTE_AFTER, collector_paused


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def _cycle_left_by_a_block(made: int) -> tuple[weakref.ref[_Node], list[list[int]]]:
    """A block that leaves ``made`` objects alive and one cycle unreachable."""
    with collector_paused():
        assert not gc.isenabled()
        kept: list[list[int]] = [[] for _ in range(made)]
        ref = weakref.ref(_Node())
    return ref, kept


def test_a_small_block_leaves_the_collector_as_it_was() -> None:
    was = gc.isenabled()
    gc.enable()
    try:
        ref, _ = _cycle_left_by_a_block(10)
        assert gc.isenabled()
        gc.collect()
        assert ref() is None
    finally:
        if not was:
            gc.disable()


def test_a_large_block_is_promoted_and_its_cycles_found_by_a_full_collection() -> None:
    was = gc.isenabled()
    gc.enable()
    try:
        ref, kept = _cycle_left_by_a_block(PROMOTE_AFTER + 1000)
        assert gc.isenabled()
        gc.collect()
        assert ref() is None
        assert len(kept) == PROMOTE_AFTER + 1000
    finally:
        if not was:
            gc.disable()


def test_a_nested_block_leaves_the_collector_paused() -> None:
    was = gc.isenabled()
    gc.enable()
    try:
        with collector_paused():
            with collector_paused():
                pass
            assert not gc.isenabled()
        assert gc.isenabled()
    finally:
        if not was:
            gc.disable()
