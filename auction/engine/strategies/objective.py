"""``objective``: the blog's objective function, maximised over feasible cells (auction.md 8.2)."""

from __future__ import annotations

import math
import zlib
from typing import Any

from ..state import AuctionState, FilterClass
from ..types import AuctionConfig, LRPWork, ObjectiveConfig, WorkItem
from .expr import ObjectiveError, evaluate, parse

WEIGHT_TOLERANCE = 1e-9


def validate_objective(objective: ObjectiveConfig) -> None:
    """Raise ``ObjectiveError`` / ``ValueError`` for a bad expression or weights."""
    parse(objective.expression)
    weights = (objective.alpha, objective.beta, objective.gamma, objective.delta)
    if any(not math.isfinite(w) or w < 0 for w in weights):
        raise ValueError("invalid objective: weights must be finite and >= 0")
    if abs(sum(weights) - 1.0) > WEIGHT_TOLERANCE:
        raise ValueError("invalid objective: alpha + beta + gamma + delta must be 1")


def app_id(guid: str) -> int:
    """``ai.app_id``: the unsigned CRC-32 of the guid."""
    return zlib.crc32(guid.encode("utf-8"))


class ObjectiveChooser:
    """Evaluates f per feasible cell before the item is placed; the first maximum wins."""

    def __init__(self, state: AuctionState, config: AuctionConfig) -> None:
        validate_objective(config.objective)
        self.state = state
        self.tree = parse(config.objective.expression)
        obj = config.objective
        zone_rank = {z: i + 1 for i, z in enumerate(state.zones)}
        self.zone_number = [zone_rank[z] for z in state.zone_of]
        self.constants = {"azs": float(len(state.zones)), "alpha": obj.alpha,
                          "beta": obj.beta, "gamma": obj.gamma, "delta": obj.delta}
        # Per-cell lists as element -> multiplicity maps; kept current from the wins seen.
        self.apps: list[dict[int, int]] = []
        self.blobs: list[dict[str, int]] = []
        for cell in state.cells:
            apps: dict[int, int] = {}
            for guid in cell.lrps:
                apps[app_id(guid)] = apps.get(app_id(guid), 0) + 1
            self.apps.append(apps)
            self.blobs.append(dict.fromkeys({*cell.cached_blob_ids, *cell.lrps}, 1))
        self.seen = [0] * len(state.cells)  # how many of each cell's wins are folded in

    def _catch_up(self, pos: int) -> None:
        won = self.state.won.get(pos, ())
        for item in won[self.seen[pos]:]:
            if type(item) is LRPWork:
                ident = app_id(item.process_guid)
                self.apps[pos][ident] = self.apps[pos].get(ident, 0) + 1
                self.blobs[pos][item.process_guid] = 1
        self.seen[pos] = len(won)

    def item_env(self, item: WorkItem) -> dict[str, Any]:
        if type(item) is LRPWork:
            guid, number = item.process_guid, item.index
            total = max(item.total_instances, item.index + 1)
        else:
            guid, number, total = item.task_guid, 0, 1  # type: ignore[union-attr]
        return {**self.constants, "ai.instance_number": number, "ai.app_id": app_id(guid),
                "ai.total_instances": total, "ai.memory_mb": item.memory_mb,
                "ai.disk_mb": item.disk_mb, "ai.app_source_blob_id": guid}

    def value(self, env: dict[str, Any], pos: int) -> float:
        st = self.state
        self._catch_up(pos)
        env.update({
            "r.available_memory_mb": st.a_mem[pos], "r.available_disk_mb": st.a_disk[pos],
            "r.available_containers": st.a_cont[pos], "r.total_memory_mb": st.t_mem[pos],
            "r.total_disk_mb": st.t_disk[pos], "r.total_containers": st.t_cont[pos],
            "r.starting_containers": st.starting[pos], "r.index": st.index[pos],
            "r.task_count": st.n_tasks[pos], "r.avail_zone_number": self.zone_number[pos],
            "r.running_app_ids": self.apps[pos], "r.cached_blob_ids": self.blobs[pos],
        })
        return evaluate(self.tree, env)

    def __call__(self, item: WorkItem, fc: FilterClass) -> tuple[int, float | None] | None:
        env = self.item_env(item)
        best: tuple[int, float] | None = None
        for pos in self.state.feasible(item, fc):
            f = self.value(env, pos)
            if best is None or f > best[1]:  # strictly greater: ties keep the first cell
                best = (pos, f)
        return best


__all__ = ["ObjectiveChooser", "ObjectiveError", "app_id", "validate_objective"]
