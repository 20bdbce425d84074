"""auction.md 2.1: ``auction.engine.gosort`` reproduces Go's ``sort.Sort`` permutation exactly.

Go's ``sort.Sort`` (pdqsort since Go 1.19) is not stable, so for equal keys Diego's order is
whatever that algorithm produces. These tests check the port by hand-derived cases, by
properties, and against vectors produced by real Go (``data/go_sort_vectors.json``).
"""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auction.engine import gosort
from auction.engine.gosort import go_sort, go_sort_by_key

PROPS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VECTORS = Path(__file__).resolve().parent / "data" / "go_sort_vectors.json"


def _go_perm(keys: list) -> list[int]:
    """The positions of ``keys`` in go_sort order (Less = key < key)."""
    perm = list(range(len(keys)))
    go_sort(perm, lambda i, j: keys[i] < keys[j])
    return perm


def _stable_perm(keys: list) -> list[int]:
    return sorted(range(len(keys)), key=keys.__getitem__)


# --- hand-derivable cases -----------------------------------------------------------------


def test_auction_md_2_1_up_to_12_items_is_insertion_sort_so_stable_exhaustive() -> None:
    """auction.md 2.1: n <= 12 is Go's insertionSort, which swaps only while
    Less(j, j-1), so equal keys keep their input order (every key tuple over {0,1,2}, n <= 7)."""
    for n in range(8):
        for keys in itertools.product(range(3), repeat=n):
            keys = list(keys)
            assert _go_perm(keys) == _stable_perm(keys)
            assert go_sort_by_key(list(range(n)), keys.__getitem__) == _stable_perm(keys)


@PROPS
@given(st.lists(st.integers(0, 3), max_size=12))
def test_auction_md_2_1_up_to_12_items_is_stable(keys: list[int]) -> None:
    """auction.md 2.1: any list of at most 12 items comes out in stable order."""
    assert _go_perm(keys) == _stable_perm(keys)
    assert go_sort_by_key(list(range(len(keys))), keys.__getitem__) == _stable_perm(keys)


def test_auction_md_2_1_hand_traced_13_items_not_stable() -> None:
    """auction.md 2.1: 13 items (> 12, so pdqsort proper), keys 1 x12 then a single 0.

    Trace (labels are original positions; Go 1.19 sort.Sort, limit = bits.Len(13) = 4):
    pdqsort(0, 13): length 13 > 12; choosePivot: l = 13, i, j, k = 3, 6, 9; 8 <= l < 50 so
      median(3, 6, 9): Less(6,3), Less(9,6), Less(6,3) all false (keys equal) -> pivot 6,
      swaps 0 -> increasingHint.
    wasBalanced && wasPartitioned && increasing -> partialInsertionSort(0, 13): i runs over
      equal keys up to i = 12 where Less(12, 11) (0 < 1); i != b and b-a = 13 < 50 -> false.
    a == 0, so no partitionEqual. partition(0, 13, pivot 6):
      Swap(0, 6)              -> [6 1 2 3 4 5 0 7 8 9 10 11 12]; i, j = 1, 12
      Less(1, 0)? 1 < 1 no;  !Less(12, 0)? key 0 < 1 so Less -> stop; i <= j
      Swap(1, 12)             -> [6 12 2 3 4 5 0 7 8 9 10 11 1]; i, j = 2, 11
      Less(2, 0)? no;  !Less(j, 0) holds for j = 11 .. 2, j stops at 1 (i <= j fails)
      i > j -> Swap(1, 0)     -> [12 6 2 3 4 5 0 7 8 9 10 11 1]; mid = 1, not partitioned.
    leftLen 1 < rightLen 12, threshold 13/8 = 1 -> wasBalanced; pdqsort(0, 1) does nothing;
      a = 2: length 11 <= 12 -> insertionSort(2, 13) over equal keys: no swaps.
    Result [12 6 2 3 4 5 0 7 8 9 10 11 1]; the stable order is [12 0 1 2 ... 11].
    (Real Go 1.19.8 prints the same.)
    """
    keys = [1] * 12 + [0]
    want = [12, 6, 2, 3, 4, 5, 0, 7, 8, 9, 10, 11, 1]
    assert _go_perm(keys) == want
    assert go_sort_by_key(list(range(13)), keys.__getitem__) == want
    assert want != _stable_perm(keys)


def test_auction_md_2_1_all_equal_13_items_unchanged() -> None:
    """auction.md 2.1: all-equal keys: choosePivot sees no swaps (increasingHint) and
    partialInsertionSort finds the slice sorted at once, so nothing moves."""
    assert _go_perm([5] * 13) == list(range(13))
    assert _go_perm([5] * 500) == list(range(500))


def test_auction_md_2_1_xorshift_is_uint64() -> None:
    """auction.md 2.1: breakPatterns' xorshift (<<13, >>17, <<5) seeded by the length, wrapped
    to 64 bits: xorshift(8).Next() = 8 ^ 8<<13 = 0x10008, >>17 adds nothing, then
    0x10008 ^ 0x200100 = 0x210108."""
    assert gosort._xorshift_next(8) == 0x210108
    r = 2**64 - 1
    for _ in range(100):
        r = gosort._xorshift_next(r)
        assert 0 <= r < 2**64
    assert gosort._next_power_of_two(8) == 16  # 1 << bits.Len(8)
    assert gosort._next_power_of_two(7) == 8


# --- properties ---------------------------------------------------------------------------

KEYS = st.integers(1, 6).flatmap(lambda d: st.lists(st.integers(0, d), max_size=400))


@PROPS
@given(KEYS)
def test_auction_md_2_1_by_key_matches_go_sort(keys: list[int]) -> None:
    """auction.md 2.1: go_sort_by_key (packed ints) and go_sort (less function) give the same
    permutation; it is a permutation of the input, sorted by the key."""
    perm = _go_perm(keys)
    by_key = go_sort_by_key(list(range(len(keys))), keys.__getitem__)
    assert by_key == perm
    assert sorted(perm) == list(range(len(keys)))
    assert all(keys[a] <= keys[b] for a, b in itertools.pairwise(perm))


@PROPS
@given(st.lists(st.tuples(st.integers(-3, 3), st.text("ab", max_size=2)), max_size=300))
def test_auction_md_2_1_go_sort_with_key_less_equals_by_key(items: list) -> None:
    """auction.md 2.1: go_sort on the items with a key-based less equals go_sort_by_key
    (items carry duplicates; identity is checked through positions)."""
    tagged = [(item, pos) for pos, item in enumerate(items)]
    key = lambda t: t[0][0]  # noqa: E731 - a key with many ties
    direct = list(tagged)
    go_sort(direct, lambda x, y: key(x) < key(y))
    assert go_sort_by_key(tagged, key) == direct
    # A tuple key (rank path) and a str key, too.
    direct2 = list(tagged)
    go_sort(direct2, lambda x, y: x[0] < y[0])
    assert go_sort_by_key(tagged, lambda t: t[0]) == direct2
    direct3 = list(tagged)
    go_sort(direct3, lambda x, y: x[0][1] < y[0][1])
    assert go_sort_by_key(tagged, lambda t: t[0][1]) == direct3


@PROPS
@given(st.lists(st.one_of(st.integers(-2, 2), st.sampled_from([0.5, -0.0, 1.0, math.nan])),
                max_size=200))
def test_auction_md_2_1_by_key_float_nan_and_mixed(keys: list) -> None:
    """auction.md 2.1: mixed int/float keys use the rank path; with NaN (no total order) the
    fallback still asks Go's exact questions."""
    assert go_sort_by_key(list(range(len(keys))), keys.__getitem__) == _go_perm(keys)


def test_auction_md_2_1_by_key_fallback_for_unranked_keys() -> None:
    """auction.md 2.1: unhashable keys (lists) and incomparable mixes take the fallback."""
    rng = random.Random(5)
    keys = [[rng.randrange(3)] for _ in range(300)]
    assert go_sort_by_key(list(range(300)), keys.__getitem__) == _go_perm(keys)
    mixed = [1, "a"] * 20  # sort.Sort would ask 1 < "a" too: the TypeError surfaces
    with pytest.raises(TypeError):
        go_sort_by_key(list(range(40)), mixed.__getitem__)


def test_auction_md_2_1_by_key_all_distinct_shortcut() -> None:
    """auction.md 2.1: with distinct keys only one order is sorted; the shortcut matches."""
    rng = random.Random(9)
    keys = rng.sample(range(10**6), 3000)
    assert go_sort_by_key(list(range(3000)), keys.__getitem__) == _go_perm(keys)


# --- real Go --------------------------------------------------------------------------------


def test_auction_md_2_1_matches_real_go_vectors() -> None:
    """auction.md 2.1: every vector from real Go (go version go1.19.8 linux/amd64, Debian's
    golang-1.19; sort.Sort's algorithm is unchanged since 1.19): 234 int-key lists, lengths
    0..2000, many ties, plus sorted / reversed / all-equal / sawtooth / organ-pipe / nearly
    sorted patterns (partialInsertionSort, reverseRange, breakPatterns) and adversarial
    inputs that exhaust the limit (heapSort, with and without ties). Go sorted structs
    {key, pos} with Less on key only and printed the positions."""
    doc = json.loads(VECTORS.read_text())
    assert doc["go_version"].startswith("go version go1.")
    assert len(doc["keys"]) == len(doc["perms"]) > 200
    for keys, want in zip(doc["keys"], doc["perms"], strict=True):
        assert _go_perm(keys) == want
        assert go_sort_by_key(list(range(len(keys))), keys.__getitem__) == want
