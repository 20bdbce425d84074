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
