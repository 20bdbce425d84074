"""Which ActualLRP state changes a caller may make (bbs.md 2.2).

``bbs: models/actual_lrp.go`` ``AllowsTransitionTo``. "same key" means the caller's
instance key (instance guid, cell id) equals the stored one; "empty key" means the
caller sends no instance key at all (the BBS itself unclaiming).
"""

from __future__ import annotations

from typing import Final

from auction.bbs.errors import BBSError
from auction.bbs.types import CLAIMED, CRASHED, RUNNING, UNCLAIMED

# How the caller's instance key must relate to the stored one for a transition.
ANY: Final = "any"  # allowed whatever key the caller sends
SAME: Final = "same"  # the caller's key must equal the stored key
EMPTY: Final = "empty"  # the caller must send an empty key
# Absent from a row = never allowed.

# bbs.md 2.2, row = from, column = to.
TRANSITIONS: Final[dict[str, dict[str, str]]] = {
    UNCLAIMED: {UNCLAIMED: ANY, CLAIMED: ANY, RUNNING: ANY},
    CLAIMED: {UNCLAIMED: EMPTY, CLAIMED: SAME, RUNNING: ANY, CRASHED: SAME},
    RUNNING: {UNCLAIMED: EMPTY, CLAIMED: SAME, RUNNING: SAME, CRASHED: SAME},
    CRASHED: {UNCLAIMED: EMPTY, CLAIMED: SAME, RUNNING: SAME},
}

# The error each refused target answers with (``bbs: models/errors.go``).
REFUSALS: Final[dict[str, BBSError]] = {
    UNCLAIMED: BBSError("ActualLRPCannotBeUnclaimed", "cannot unclaim actual LRP"),
    CLAIMED: BBSError("ActualLRPCannotBeClaimed", "cannot claim actual LRP"),
    RUNNING: BBSError("ActualLRPCannotBeStarted", "cannot start actual LRP"),
    CRASHED: BBSError("ActualLRPCannotBeCrashed", "cannot crash actual LRP"),
}


def allows_transition(
    from_state: str, to_state: str, *, same_key: bool, caller_key_empty: bool = False
) -> bool:
    """bbs.md 2.2: may a row in ``from_state`` move to ``to_state`` for this caller?"""
    rule = TRANSITIONS.get(from_state, {}).get(to_state)
    if rule is None:
        return False
    if rule == SAME:
        return same_key
    if rule == EMPTY:
        return caller_key_empty
    return True


def transition_error(
    from_state: str, to_state: str, *, same_key: bool, caller_key_empty: bool = False
) -> BBSError | None:
    """``None`` when allowed, else the BBS error naming the refused target state."""
    if allows_transition(
        from_state, to_state, same_key=same_key, caller_key_empty=caller_key_empty
    ):
        return None
    if to_state not in REFUSALS:
        raise ValueError(f"unknown ActualLRP state {to_state!r}")
    return REFUSALS[to_state]
