"""The smallest change that can fit (dashboard.md G9; the filters of auction.md 3)."""

from __future__ import annotations

from auction.engine.advice import Need, cell_advice, smallest_change
from auction.engine.types import CellState, Resources


def cell(cell_id: str, total: int, free: int, *, stacks: tuple[str, ...] = ("cflinuxfs4",),
         drivers: tuple[str, ...] = (), tags: tuple[str, ...] = (), optional: tuple[str, ...] = (),
         disk: int = 100_000, proxy: int = 0) -> CellState:
    return CellState(cell_id, "z1", 0, Resources(total, disk, 100), Resources(free, disk, 100),
                     preloaded_rootfses=stacks, volume_drivers=drivers, placement_tags=tags,
                     optional_placement_tags=optional, proxy_memory_mb=proxy)


def test_never_asks_a_cell_to_free_more_than_it_has() -> None:
    """G9: an app larger than every 8 GB cell gets no "free 13856 MB on cell-2"; the only
    cell large enough lacks the stack: the advice is to add it there (auction.md 3.1)."""
    cells = [cell("cell-1", 8192, 1000), cell("cell-2", 8192, 8000),
             cell("cell-5", 32768, 32768, stacks=("cflinuxfs3",))]
    text, advice = smallest_change(cells, Need(20_000, 1024, "preloaded:cflinuxfs4"))
    assert text == "add cflinuxfs4 to cell-5"
    assert [a.possible for a in advice] == [False, False, True]
    assert advice[1].change == "never fits cell-2: needs 20000 MB memory (it has 8192 MB in all)"


def test_no_cell_large_enough_asks_for_a_new_cell() -> None:
    """G9: "add a cell of >= 20 GB" with the stack it needs, counting the proxy's memory."""
    cells = [cell("cell-1", 8192, 8192, proxy=32), cell("cell-2", 16384, 0, proxy=32)]
    text, _ = smallest_change(cells, Need(20_480, 1024, "preloaded:cflinuxfs4"))
    assert text == "add a cell of >= 20512 MB memory with cflinuxfs4"
    text, _ = smallest_change(cells, Need(20_480, 1024, "docker:///busybox", volume_drivers=("nfs",),
                                          placement_tags=("gpu",), proxy=False))
    assert text == ("add a cell of >= 20480 MB memory with the docker rootfs provider "
                    "and volume driver nfs and placement tag gpu")


def test_freeing_beats_reconfiguring_and_every_filter_is_considered() -> None:
    """G9 over auction.md 3.1-3.3: drivers and tags are changes on a cell too; freeing
    memory on a compatible cell is smaller than reconfiguring another."""
    tagged = cell("cell-3", 8192, 8192, tags=("db",))
    assert cell_advice(tagged, Need(512, 10, "preloaded:cflinuxfs4")).change == "drop required tag db from cell-3"
    plain = cell("cell-4", 8192, 8192)
    assert cell_advice(plain, Need(512, 10, "preloaded:cflinuxfs4", volume_drivers=("nfs",),
                                   placement_tags=("gpu",))).change == (
        "add volume driver nfs to cell-4 and add placement tag gpu to cell-4")
    busy = cell("cell-6", 8192, 100)
    text, _ = smallest_change([tagged, busy], Need(512, 10, "preloaded:cflinuxfs4"))
    assert text == "free 412 MB memory on cell-6"


def test_a_cell_that_fits_needs_nothing_and_a_rootfs_no_cell_can_match_says_its_form() -> None:
    """G9; bbs.md 1.2 rule 3 (a rootfs is a URL with a scheme)."""
    text, _ = smallest_change([cell("cell-1", 8192, 8192)], Need(512, 10, "preloaded:cflinuxfs4"))
    assert text.startswith("none needed")
    text, _ = smallest_change([cell("cell-1", 8192, 8192)], Need(512, 10, "cflinuxfs4"))
    assert "expected preloaded:<stack>" in text and "docker:///<image>" in text
    assert smallest_change([], Need(512, 10, "preloaded:cflinuxfs4"))[0] == "no cell answers: restore a cell"
