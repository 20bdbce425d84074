"""Decision records for the dashboard's auction replay (explanations as data).

Only the explanation path (``reference.py`` for ``diego``, the generic driver for the other
strategies) builds these; the fast path never touches them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

OUTCOME_FILTERED = "filtered"  # failed a filter (auction.md 3.1-3.3)
OUTCOME_UNFIT = "unfit"  # compatible but failed the fit check (auction.md 3)
OUTCOME_SCORED = "scored"  # compatible, fits, scored (auction.md 4.4)
OUTCOME_FEASIBLE = "feasible"  # compatible and fits, for strategies without a Diego score


@dataclass(slots=True)
class CellVerdict:
    """One cell's answer for one item.

    ``reached`` is false for cells of zone groups the walk never got to (an earlier group
    had a winner, auction.md 4.2 step 3); their score is still shown for the replay.
    ``score`` = ((resource + starting) + locality) + bin_pack, in that operation order.
    """

    cell_id: str
    zone: str
    outcome: str
    filter: str | None = None
    problems: tuple[str, ...] = ()
    resource: float | None = None
    starting: float | None = None
    locality: float | None = None
    bin_pack: float | None = None
    score: float | None = None
    reached: bool = True


@dataclass(slots=True)
class ItemExplanation:
    """Why one work item went where it went (or failed)."""

    identifier: str
    kind: str  # "lrp" | "task"
    priority_group: int  # auction.md 2
    position: int  # 0-based position in the ordered batch
    group_position: int  # 0-based position inside its priority group
    strategy: str = "diego"
    zone_counts: dict[str, int] = field(default_factory=dict)
    zone_groups: list[dict[str, Any]] = field(default_factory=list)  # walked, in order
    chosen_zones: list[str] | None = None
    cells: list[CellVerdict] = field(default_factory=list)
    candidates: list[str] | None = None  # the non-diego strategies' final candidate list
    winner: str | None = None
    score: float | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
