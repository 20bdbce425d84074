"""A fuzz of the plan changes (plans.md 1.2, bbs.md 1.5): any JSON a client can send as a
change is either a checked change or a ``PlanError`` in the BBS's words, never another
exception (a desire without a process guid answered 500: issue 27)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from auction.sim.plan_changes import CHANGE_NAMES, PlanError, plan_changes

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8)
FIELDS = st.sampled_from(["process_guid", "domain", "rootfs", "instances", "memory_mb", "disk_mb",
                          "placement_tags", "volume_drivers", "ports", "start_delay_s",
                          "crash_probability", "crash_after_s", "cell_id", "zone", "index",
                          "count", "memory", "at", "epoch", "tag"])
CHANGE = st.builds(lambda action, fields: {"action": action, **fields},
                   st.sampled_from(sorted(CHANGE_NAMES)), st.dictionaries(FIELDS, JSON, max_size=5))


@settings(max_examples=400, deadline=None)
@given(st.lists(CHANGE | JSON, max_size=3))
def test_any_change_is_checked_or_refused_in_words(changes) -> None:
    try:
        plan_changes(changes)
    except PlanError as refused:
        assert refused.message and refused.status in (400, 404)


def test_a_desire_missing_or_mistyping_its_process_guid_names_it() -> None:
    for change in ({"action": "desire", "instances": 2},
                   {"action": "desire", "process_guid": 7},
                   {"action": "desire", "process_guid": "x", "rootfs": ["a"], "ports": [True]}):
        try:
            plan_changes([change])
        except PlanError as refused:
            assert "Invalid field:" in refused.message
            continue
        raise AssertionError(f"accepted {change}")
