"""bbs.md 6.1 (presence) and 6.2 (cell loss): a cell's presence lapse is due at its own
instant and at no other; one at or before the store's ``now`` stays past. The database
store answers as the memory store does, at the boundaries (docs/architecture.md "Two
stores").
"""

from __future__ import annotations

from typing import Any

import pytest

from auction.models import SimClock
from auction.services.store import DbStore
from auction.sim.changes import ChangeSet
from auction.sim.memory import World
from auction.sim.model import FAILED, SimCell

pytestmark = pytest.mark.django_db

NOW = 50.0
AT = 60.0
FAR = 1e9  # no convergence pass in sight: a lapse is the only thing due

CELLS = [
    SimCell("lost-now", "z1", 0, presence_lost_at=NOW),
    SimCell("lost-at", "z1", 1, presence_lost_at=AT),
    SimCell("lost-at-failed", "z2", 0, state=FAILED, presence_lost_at=AT),
    SimCell("lost-just-after", "z2", 1, presence_lost_at=AT + 0.25),
    SimCell("kept", "z2", 2),
]


def stores() -> list[Any]:
    SimClock.objects.update_or_create(pk=1, defaults={"paused": True, "advanced_to": NOW,
                                                      "next_convergence_at": FAR})
    database = DbStore(trigger_auctions=False)
    memory = World(now=NOW, next_convergence_at=FAR)
    for store in (database, memory):
        store.apply(ChangeSet(NOW, cells_put=list(CELLS)))
    return [database, memory]


def lapsed(store: Any, at: float) -> list[str]:
    return [c.cell_id for c in store.due_lapses(at)]


def test_a_lapse_is_due_at_its_instant_in_both_stores() -> None:
    answers = []
    for store in stores():
        answer: dict[str, object] = {"next": store.next_due()}
        for at in (NOW, AT - 0.25, AT, AT + 0.25):
            answer[f"at {at}"] = lapsed(store, at)
        store.advanced(AT)  # the lapses at AT handled: they stay past
        answer["next after"] = store.next_due()
        answer[f"again at {AT}"] = lapsed(store, AT)
        answer[f"after at {AT + 0.25}"] = lapsed(store, AT + 0.25)
        answers.append(answer)
    database, memory = answers
    assert database == memory
    assert database == {
        "next": AT,
        f"at {NOW}": [], f"at {AT - 0.25}": [],
        f"at {AT}": ["lost-at", "lost-at-failed"],
        f"at {AT + 0.25}": ["lost-at", "lost-at-failed", "lost-just-after"],
        "next after": AT + 0.25,
        f"again at {AT}": [],
        f"after at {AT + 0.25}": ["lost-just-after"],
    }
