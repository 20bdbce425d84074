"""Forming and ordering the batch (auction.md 1 step 4, auction.md 2)."""

from auction.engine import LRPWork, TaskWork, dedupe, order_batch, priority_group
from auction.engine.batch import identifier


def _ids(items):
    return [identifier(i) for i in items]


def test_concept_doc_example_order_auction_md_2():
    """auction.md 2: LRP-A 3x2, LRP-B 2x5, Task-C 4, Task-D 3 -> B.0 A.0 C D B.1 A.1 A.2."""
    items = [LRPWork("A", k, 2, 1) for k in range(3)] + [LRPWork("B", k, 5, 1) for k in range(2)]
    items += [TaskWork("C", 4, 1), TaskWork("D", 3, 1)]
    assert _ids(order_batch(items)) == ["B.0", "A.0", "C", "D", "B.1", "A.1", "A.2"]


def test_index_zero_first_even_without_other_instances_auction_md_2():
    """auction.md 2: group 1 precedes tasks even with no index > 0 (Diego's quirk not copied)."""
    items = [TaskWork("t", 500, 1), LRPWork("a", 0, 10, 1)]
    assert _ids(order_batch(items)) == ["a.0", "t"]


def test_stable_sort_and_keys_auction_md_2():
    """auction.md 2: stable within equal keys; group 3 by index, then memory descending."""
    items = [LRPWork("x", 2, 10, 1), LRPWork("y", 1, 10, 5), LRPWork("z", 1, 20, 1),
             LRPWork("w", 1, 10, 9), TaskWork("t1", 5, 1), TaskWork("t2", 5, 99)]
    assert _ids(order_batch(items)) == ["t1", "t2", "z.1", "y.1", "w.1", "x.2"]
    assert [priority_group(i) for i in order_batch(items)] == [2, 2, 3, 3, 3, 3]


def test_dedupe_keeps_first_occurrence_per_kind_auction_md_1_4():
    """auction.md 1.4: LRPs and tasks de-duplicated separately by identifier, first kept."""
    first = LRPWork("a", 1, 10, 1, ref="first")
    items = [first, TaskWork("t", 1, 1, ref=1), LRPWork("a", 1, 99, 1, ref="second"),
             TaskWork("t", 2, 2, ref=2), LRPWork("a", 2, 10, 1)]
    out = dedupe(items)
    assert _ids(out) == ["a.1", "t", "a.2"]
    assert out[0].ref == "first" and out[1].ref == 1


def test_go_compat_puts_tasks_first_in_an_all_index_0_batch_auction_md_2_1():
    """auction.md 2.1 (1): with no LRP of index > 0, Diego's splitLRPS cuts at 0 and every
    LRP runs after the tasks; with one, the index-0 LRPs still come first."""
    items = [TaskWork("t", 500, 1), LRPWork("a", 0, 10, 1), LRPWork("b", 0, 20, 1)]
    assert _ids(order_batch(items, go_compat=True)) == ["t", "b.0", "a.0"]
    assert _ids(order_batch(items)) == ["b.0", "a.0", "t"]
    items.append(LRPWork("a", 1, 10, 1))
    assert _ids(order_batch(items, go_compat=True)) == ["b.0", "a.0", "t", "a.1"]


def test_go_compat_small_batches_keep_input_order_on_ties_auction_md_2_1():
    """auction.md 2.1 (2): up to 12 items Go's sort.Sort is an insertion sort, so equal keys
    keep their batch order, as the default stable sort does."""
    items = [LRPWork(f"p{n}", 1, 64, 1) for n in range(12)] + [TaskWork("t", 1, 1)]
    assert order_batch(items, go_compat=True)[1:] == order_batch(items)[1:]


def test_go_compat_sorts_past_12_items_in_go_order_auction_md_2_1():
    """auction.md 2.1 (2): 13 LRPs of index 1, twelve of 64 MB then one of 128 MB: Go's
    pdqsort (traced by hand in test_gosort.py, and printed by Go 1.19) gives positions
    12, 6, 2, 3, 4, 5, 0, 7, 8, 9, 10, 11, 1, not the stable 12, 0, 1, ..., 11."""
    items = [LRPWork(f"p{n}", 1, 64, 1) for n in range(12)] + [LRPWork("p12", 1, 128, 1)]
    go = [int(i.process_guid[1:]) for i in order_batch(items, go_compat=True)]
    assert go == [12, 6, 2, 3, 4, 5, 0, 7, 8, 9, 10, 11, 1]
    assert [int(i.process_guid[1:]) for i in order_batch(items)] == [12, *range(12)]
