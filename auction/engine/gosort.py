"""Go's ``sort.Sort`` (pattern-defeating quicksort, Go 1.19 and later), ported exactly.

auction.md 2.1: Diego orders LRP auctions, tasks and cells with Go's ``sort.Sort``, which is
*not* stable. To reproduce Diego's order for equal keys we run the same algorithm: the
final permutation of any ``sort.Sort`` run is fixed by the sequence of ``Less`` answers,
so a port that asks the same questions in the same order and swaps the same positions
ends with the same permutation.

Sources ported: ``src/sort/zsortinterface.go`` (generated from ``gen_sort_variants.go``)
and ``src/sort/sort.go`` (``Sort``, ``xorshift``, ``nextPowerOfTwo``). Each function
below says which Go function it ports. Go integer details kept:

- ``bits.Len(uint(n))`` is ``n.bit_length()`` for ``n >= 0``;
- ``xorshift`` is a ``uint64``: every shift result is masked to 64 bits;
- ``/`` on ints is ``//`` here (all operands are non-negative, so truncation equals floor);
- ``int(uint(x) & (modulus - 1))`` is ``x & (modulus - 1)`` (``x`` is already < 2**64).

Two entry points:

- :func:`go_sort` sorts a list in place with a ``less(x, y)`` function; one ``less`` call
  per Go ``Less`` call, in the same order.
- :func:`go_sort_by_key` returns a new list ordered as ``sort.Sort`` with
  ``Less(i, j) = key(data[i]) < key(data[j])``. It is the fast path: for keys of a type
  with a total order (``int``/``bool``/non-NaN ``float``, ``str``, ``bytes``, tuples of
  those) each key is replaced by its dense rank among the distinct keys, and rank and
  position are packed into one int ``rank << s | position``. Comparing two keys is then a
  single int comparison (``(x | low) < y``), and one list swap moves key and item
  together. When all keys are distinct there is only one sorted order, so the result is
  built directly from the ranks. Other keys fall back to :func:`go_sort`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["go_sort", "go_sort_by_key"]

_MASK64 = 0xFFFFFFFFFFFFFFFF

# sort.go: sortedHint
_UNKNOWN_HINT = 0
_INCREASING_HINT = 1
_DECREASING_HINT = 2

_MAX_INSERTION = 12  # pdqsort: const maxInsertion
_SHORTEST_NINTHER = 50  # choosePivot: const shortestNinther
_MAX_SWAPS = 4 * 3  # choosePivot: const maxSwaps
_MAX_STEPS = 5  # partialInsertionSort: const maxSteps
_SHORTEST_SHIFTING = 50  # partialInsertionSort: const shortestShifting


def _xorshift_next(r: int) -> int:
    """Ports sort.go ``(*xorshift).Next``: returns the new state (which is also the output)."""
    r ^= (r << 13) & _MASK64
    r ^= r >> 17
    r ^= (r << 5) & _MASK64
    return r


def _next_power_of_two(length: int) -> int:
    """Ports sort.go ``nextPowerOfTwo``: ``1 << bits.Len(uint(length))``."""
    return 1 << length.bit_length()


# ---------------------------------------------------------------------------------------
# Generic variant: Less(i, j) = less(data[i], data[j]); Swap swaps list elements.
# A line-by-line port; each ``less(...)`` below is one Go ``data.Less`` call.
# ---------------------------------------------------------------------------------------


def go_sort(data: list, less: Callable[[Any, Any], bool]) -> None:
    """Sort ``data`` in place exactly as Go's ``sort.Sort`` (ports sort.go ``Sort``)."""
    n = len(data)
    if n <= 1:
        return
    limit = n.bit_length()  # bits.Len(uint(n))
    _pdqsort(data, less, 0, n, limit)


def _insertion_sort(data: list, less: Callable[[Any, Any], bool], a: int, b: int) -> None:
    """Ports ``insertionSort``."""
    for i in range(a + 1, b):
        j = i
        while j > a and less(data[j], data[j - 1]):
            data[j], data[j - 1] = data[j - 1], data[j]
            j -= 1


def _sift_down(data: list, less: Callable[[Any, Any], bool], lo: int, hi: int,
               first: int) -> None:
    """Ports ``siftDown``."""
    root = lo
    while True:
        child = 2 * root + 1
        if child >= hi:
            break
        if child + 1 < hi and less(data[first + child], data[first + child + 1]):
            child += 1
        if not less(data[first + root], data[first + child]):
            return
        data[first + root], data[first + child] = data[first + child], data[first + root]
        root = child


def _heap_sort(data: list, less: Callable[[Any, Any], bool], a: int, b: int) -> None:
    """Ports ``heapSort``."""
    first = a
    lo = 0
    hi = b - a
    for i in range((hi - 1) // 2, -1, -1):
        _sift_down(data, less, i, hi, first)
    for i in range(hi - 1, -1, -1):
        data[first], data[first + i] = data[first + i], data[first]
        _sift_down(data, less, lo, i, first)


def _pdqsort(data: list, less: Callable[[Any, Any], bool], a: int, b: int,
             limit: int) -> None:
    """Ports ``pdqsort`` (sorts data[a:b])."""
    was_balanced = True
    was_partitioned = True
    while True:
        length = b - a
        if length <= _MAX_INSERTION:
            _insertion_sort(data, less, a, b)
            return
        if limit == 0:
            _heap_sort(data, less, a, b)
            return
        if not was_balanced:
            _break_patterns(data, a, b)
            limit -= 1

        pivot, hint = _choose_pivot(data, less, a, b)
        if hint == _DECREASING_HINT:
            _reverse_range(data, a, b)
            pivot = (b - 1) - (pivot - a)
            hint = _INCREASING_HINT

        if was_balanced and was_partitioned and hint == _INCREASING_HINT:
            if _partial_insertion_sort(data, less, a, b):
                return

        if a > 0 and not less(data[a - 1], data[pivot]):
            a = _partition_equal(data, less, a, b, pivot)
            continue

        mid, was_partitioned = _partition(data, less, a, b, pivot)

        left_len, right_len = mid - a, b - mid
        balance_threshold = length // 8
        if left_len < right_len:
            was_balanced = left_len >= balance_threshold
            _pdqsort(data, less, a, mid, limit)
            a = mid + 1
        else:
            was_balanced = right_len >= balance_threshold
            _pdqsort(data, less, mid + 1, b, limit)
            b = mid


def _partition(data: list, less: Callable[[Any, Any], bool], a: int, b: int,
               pivot: int) -> tuple[int, bool]:
    """Ports ``partition``: returns (newpivot, alreadyPartitioned)."""
    data[a], data[pivot] = data[pivot], data[a]
    i, j = a + 1, b - 1
    while i <= j and less(data[i], data[a]):
        i += 1
    while i <= j and not less(data[j], data[a]):
        j -= 1
    if i > j:
        data[j], data[a] = data[a], data[j]
        return j, True
    data[i], data[j] = data[j], data[i]
    i += 1
    j -= 1
    while True:
        while i <= j and less(data[i], data[a]):
            i += 1
        while i <= j and not less(data[j], data[a]):
            j -= 1
        if i > j:
            break
        data[i], data[j] = data[j], data[i]
        i += 1
        j -= 1
    data[j], data[a] = data[a], data[j]
    return j, False


def _partition_equal(data: list, less: Callable[[Any, Any], bool], a: int, b: int,
                     pivot: int) -> int:
    """Ports ``partitionEqual``: returns newpivot."""
    data[a], data[pivot] = data[pivot], data[a]
    i, j = a + 1, b - 1
    while True:
        while i <= j and not less(data[a], data[i]):
            i += 1
        while i <= j and less(data[a], data[j]):
            j -= 1
        if i > j:
            break
        data[i], data[j] = data[j], data[i]
        i += 1
        j -= 1
    return i


def _partial_insertion_sort(data: list, less: Callable[[Any, Any], bool], a: int,
                            b: int) -> bool:
    """Ports ``partialInsertionSort``: True if data[a:b] ends up sorted."""
    i = a + 1
    for _ in range(_MAX_STEPS):
        while i < b and not less(data[i], data[i - 1]):
            i += 1
        if i == b:
            return True
        if b - a < _SHORTEST_SHIFTING:
            return False
        data[i], data[i - 1] = data[i - 1], data[i]
        # Shift the smaller one to the left. (Go's loop bound is ``j >= 1``, not ``a + 1``.)
        if i - a >= 2:
            j = i - 1
            while j >= 1:
                if not less(data[j], data[j - 1]):
                    break
                data[j], data[j - 1] = data[j - 1], data[j]
                j -= 1
        # Shift the greater one to the right.
        if b - i >= 2:
            j = i + 1
            while j < b:
                if not less(data[j], data[j - 1]):
                    break
                data[j], data[j - 1] = data[j - 1], data[j]
                j += 1
    return False


def _break_patterns(data: list, a: int, b: int) -> None:
    """Ports ``breakPatterns`` (no comparisons: shared by both variants)."""
    length = b - a
    if length >= 8:
        random = length  # xorshift(length)
        modulus = _next_power_of_two(length)
        mid = a + (length // 4) * 2
        for idx in range(mid - 1, mid + 2):
            random = _xorshift_next(random)
            other = random & (modulus - 1)
            if other >= length:
                other -= length
            data[idx], data[a + other] = data[a + other], data[idx]


def _choose_pivot(data: list, less: Callable[[Any, Any], bool], a: int,
                  b: int) -> tuple[int, int]:
    """Ports ``choosePivot`` (with ``order2``, ``median``, ``medianAdjacent`` inlined as
    helpers below): returns (pivot, hint)."""
    n = b - a
    swaps = [0]
    i = a + n // 4 * 1
    j = a + n // 4 * 2
    k = a + n // 4 * 3
    if n >= 8:
        if n >= _SHORTEST_NINTHER:
            i = _median(data, less, i - 1, i, i + 1, swaps)  # medianAdjacent
            j = _median(data, less, j - 1, j, j + 1, swaps)
            k = _median(data, less, k - 1, k, k + 1, swaps)
        j = _median(data, less, i, j, k, swaps)
    if swaps[0] == 0:
        return j, _INCREASING_HINT
    if swaps[0] == _MAX_SWAPS:
        return j, _DECREASING_HINT
    return j, _UNKNOWN_HINT


def _order2(data: list, less: Callable[[Any, Any], bool], a: int, b: int,
            swaps: list[int]) -> tuple[int, int]:
    """Ports ``order2``."""
    if less(data[b], data[a]):
        swaps[0] += 1
        return b, a
    return a, b


def _median(data: list, less: Callable[[Any, Any], bool], a: int, b: int, c: int,
            swaps: list[int]) -> int:
    """Ports ``median``."""
    a, b = _order2(data, less, a, b, swaps)
    b, c = _order2(data, less, b, c, swaps)
    a, b = _order2(data, less, a, b, swaps)
    return b


def _reverse_range(data: list, a: int, b: int) -> None:
    """Ports ``reverseRange``."""
    i = a
    j = b - 1
    while i < j:
        data[i], data[j] = data[j], data[i]
        i += 1
        j -= 1


# ---------------------------------------------------------------------------------------
# Packed-int variant used by go_sort_by_key. Each element is ``x = rank << s | pos`` with
# ``pos < 2**s``; ``low = 2**s - 1``. For two elements x, y:
#     key(x) < key(y)  <=>  rank(x) < rank(y)  <=>  (x | low) < y  <=>  x < (y & ~low)
# (x | low is the largest value with x's rank; y & ~low the smallest with y's rank). So every
# Go ``Less`` is one int comparison, and a comparison against a fixed element (the pivot)
# uses a precomputed bound. Same questions, same order, same swaps as the generic variant;
# where a chain of adjacent swaps moves one element, it is written as a shift, which leaves
# the list exactly as the swaps would.
# ---------------------------------------------------------------------------------------


def _k_insertion_sort(c: list[int], a: int, b: int, low: int) -> None:
    """``insertionSort`` on packed ints."""
    for i in range(a + 1, b):
        x = c[i]
        xl = x | low
        j = i
        while j > a:
            y = c[j - 1]
            if xl < y:  # Less(j, j-1): data[j] is x all along this chain of swaps
                c[j] = y
                j -= 1
            else:
                break
        if j != i:
            c[j] = x


def _k_heap_sort(c: list[int], a: int, b: int, low: int) -> None:
    """``heapSort`` (with ``siftDown``) on packed ints."""
    first = a
    hi = b - a

    def sift_down(root: int, hi: int) -> None:
        while True:
            child = 2 * root + 1
            if child >= hi:
                break
            fc = first + child
            if child + 1 < hi and (c[fc] | low) < c[fc + 1]:
                child += 1
                fc += 1
            fr = first + root
            if not (c[fr] | low) < c[fc]:
                return
            c[fr], c[fc] = c[fc], c[fr]
            root = child

    for i in range((hi - 1) // 2, -1, -1):
        sift_down(i, hi)
    for i in range(hi - 1, -1, -1):
        c[first], c[first + i] = c[first + i], c[first]
        sift_down(0, i)


def _k_pdqsort(c: list[int], a: int, b: int, limit: int, low: int) -> None:
    """``pdqsort`` on packed ints (``partition``, ``partitionEqual``, ``choosePivot`` and
    ``partialInsertionSort`` inlined; see the generic variant for the plain port)."""
    was_balanced = True
    was_partitioned = True
    high = ~low
    while True:
        length = b - a
        if length <= _MAX_INSERTION:
            _k_insertion_sort(c, a, b, low)
            return
        if limit == 0:
            _k_heap_sort(c, a, b, low)
            return
        if not was_balanced:
            _break_patterns(c, a, b)
            limit -= 1

        # ---- choosePivot
        swaps = 0
        q = length // 4
        i = a + q
        j = i + q
        k = j + q
        if length >= 8:
            if length >= _SHORTEST_NINTHER:
                # medianAdjacent(i), (j), (k): median(m-1, m, m+1)
                pts = [i, j, k]
                for t in range(3):
                    m = pts[t]
                    x, y, z = m - 1, m, m + 1
                    if (c[y] | low) < c[x]:  # order2(x, y)
                        swaps += 1
                        x, y = y, x
                    if (c[z] | low) < c[y]:  # order2(y, z)
                        swaps += 1
                        y, z = z, y
                    if (c[y] | low) < c[x]:  # order2(x, y)
                        swaps += 1
                        x, y = y, x
                    pts[t] = y
                i, j, k = pts
            # median(i, j, k)
            if (c[j] | low) < c[i]:
                swaps += 1
                i, j = j, i
            if (c[k] | low) < c[j]:
                swaps += 1
                j, k = k, j
            if (c[j] | low) < c[i]:
                swaps += 1
                i, j = j, i
        pivot = j
        if swaps == 0:
            hint = _INCREASING_HINT
        elif swaps == _MAX_SWAPS:
            hint = _DECREASING_HINT
        else:
            hint = _UNKNOWN_HINT

        if hint == _DECREASING_HINT:
            # reverseRange(a, b)
            c[a:b] = c[a:b][::-1]
            pivot = (b - 1) - (pivot - a)
            hint = _INCREASING_HINT

        if was_balanced and was_partitioned and hint == _INCREASING_HINT:
            if _k_partial_insertion_sort(c, a, b, low):
                return

        if a > 0 and not (c[a - 1] | low) < c[pivot]:
            # ---- partitionEqual: Less(a, i) <=> c[i] > (c[a] | low)
            c[a], c[pivot] = c[pivot], c[a]
            bound = c[a] | low
            i, j = a + 1, b - 1
            while True:
                while i <= j and c[i] <= bound:
                    i += 1
                while i <= j and c[j] > bound:
                    j -= 1
                if i > j:
                    break
                c[i], c[j] = c[j], c[i]
                i += 1
                j -= 1
            a = i
            continue

        # ---- partition: Less(i, a) <=> c[i] < (c[a] & high)
        c[a], c[pivot] = c[pivot], c[a]
        bound = c[a] & high
        i, j = a + 1, b - 1
        while i <= j and c[i] < bound:
            i += 1
        while i <= j and c[j] >= bound:
            j -= 1
        if i > j:
            was_partitioned = True
        else:
            was_partitioned = False
            c[i], c[j] = c[j], c[i]
            i += 1
            j -= 1
            while True:
                while i <= j and c[i] < bound:
                    i += 1
                while i <= j and c[j] >= bound:
                    j -= 1
                if i > j:
                    break
                c[i], c[j] = c[j], c[i]
                i += 1
                j -= 1
        c[j], c[a] = c[a], c[j]
        mid = j

        left_len, right_len = mid - a, b - mid
        balance_threshold = length // 8
        if left_len < right_len:
            was_balanced = left_len >= balance_threshold
            _k_pdqsort(c, a, mid, limit, low)
            a = mid + 1
        else:
            was_balanced = right_len >= balance_threshold
            _k_pdqsort(c, mid + 1, b, limit, low)
            b = mid


def _k_partial_insertion_sort(c: list[int], a: int, b: int, low: int) -> bool:
    """``partialInsertionSort`` on packed ints."""
    i = a + 1
    for _ in range(_MAX_STEPS):
        while i < b and not (c[i] | low) < c[i - 1]:
            i += 1
        if i == b:
            return True
        if b - a < _SHORTEST_SHIFTING:
            return False
        c[i], c[i - 1] = c[i - 1], c[i]
        if i - a >= 2:  # shift the smaller one left (Go's bound: j >= 1)
            j = i - 1
            x = c[j]
            xl = x | low
            while j >= 1:
                y = c[j - 1]
                if not xl < y:
                    break
                c[j] = y
                j -= 1
            c[j] = x
        if b - i >= 2:  # shift the greater one right
            j = i + 1
            x = c[i]  # data[j-1] along the chain of swaps
            while j < b:
                y = c[j]
                if not (y | low) < x:
                    break
                c[j - 1] = y
                j += 1
            c[j - 1] = x
    return False


_SCALAR_TYPES = frozenset({int, bool, float, str, bytes})


def _totally_ordered(keys: list) -> bool:
    """True when ``<`` on these keys is a total order in which "neither is less" means
    ``==`` (so ranking the distinct keys preserves every ``<`` answer): ints, bools,
    non-NaN floats, strs, bytes and tuples of those. Mixed incomparable types are caught
    later (``sorted`` raises TypeError)."""
    types = set(map(type, keys))
    if not types <= _SCALAR_TYPES | {tuple}:
        return False
    if float in types and any(k != k for k in keys if type(k) is float):
        return False
    if tuple in types:
        return all(_totally_ordered(list(k)) for k in keys if type(k) is tuple)
    return True


def go_sort_by_key(data: list, key: Callable[[Any], Any]) -> list:
    """A new list ordered as Go's ``sort.Sort`` with ``Less(i, j) = key(data[i]) <
    key(data[j])`` (``key`` is called once per element)."""
    items = list(data)
    n = len(items)
    if n <= 1:
        return items
    keys = [key(x) for x in items]
    uniq = None
    if _totally_ordered(keys):
        try:
            uniq = sorted(set(keys))
        except TypeError:
            uniq = None
    if uniq is None:
        pairs = list(zip(keys, items, strict=True))
        go_sort(pairs, lambda p, q: p[0] < q[0])
        return [p[1] for p in pairs]
    rank_of = {v: r for r, v in enumerate(uniq)}
    ranks = list(map(rank_of.__getitem__, keys))
    if len(uniq) == n:
        # All keys distinct: exactly one order is sorted, and sort.Sort finds it.
        out: list = [None] * n
        for item, r in zip(items, ranks, strict=True):
            out[r] = item
        return out
    shift = (n - 1).bit_length()
    low = (1 << shift) - 1
    packed = [(r << shift) | p for p, r in enumerate(ranks)]
    _k_pdqsort(packed, 0, n, n.bit_length(), low)
    return [items[x & low] for x in packed]
