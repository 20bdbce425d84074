"""The auction sequence pages (dashboard.md section 2): read models over stored records.

Everything here reads what the auctioneer recorded for an ``AuctionRun`` (the order, the
placements, the per-item decision record of ``auction.engine.explain``) and never runs
the engine again, so stepping back and forth is exact. The helpers that only reshape a
record (reasons, runners-up, the zone walk, the summary kept for older auctions) are
plain functions of plain data.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q

from auction.models import AuctionRun, PlanAuction
from auction.selectors.clock import world_epoch
from auction.templatetags.diego_format import format_score

LIST_LIMIT = 200  # A1, L6
RUNNERS_UP = 5  # G10, and what older auctions keep (dashboard.md 2)
BIG_CELLS = 200  # A8: over this, the top rows, reason counts and paged rows
BIG_ITEMS = 200  # A8: over this, a minimap
TOP_ROWS = 10
PAGE_ROWS = 50
STRIP_WINDOW = 25  # items either side of the current one in a big auction's strip
STRIP_MAX_PX = 160
STRIP_MIN_PX = 48

LANES = ((1, "First instances"), (2, "Tasks"), (3, "Remaining instances"))
FILTERS = ("rootfs", "volume_drivers", "placement_tags")
FILTER_LABELS = {"rootfs": "rootfs", "volume_drivers": "volume drivers",
                 "placement_tags": "placement tags"}
PARTS = ("resource", "starting", "locality", "bin_pack")
PART_LABELS = {"resource": "resource", "starting": "starting", "locality": "locality",
               "bin_pack": "bin-pack"}
ERR_IN_FLIGHT = "waiting to start instance: reached in-flight start limit"
ERR_NO_CELLS = "unable to communicate to compatible cells"
STRATEGY_RULES = {
    "diego": "lowest score wins: resource + starting + locality + bin-pack, zones walked by "
             "ascending instance count (auction.md 4)",
    "dea": "dea's narrowing: zone with the fewest of this app, then the fewest on the cell, "
           "then the top half by free memory, then a seeded random pick (auction.md 8.1)",
    "objective": "the feasible cell that maximises the objective f wins (auction.md 8.2)",
    "random": "a seeded random pick among the feasible cells (auction.md 8.3)",
}


# --- pure helpers over one item's decision record -------------------------------------

def verdict_reason(verdict: dict[str, Any]) -> str | None:
    """Why a cell could not take the item, or None when it could."""
    outcome = verdict.get("outcome")
    if outcome == "filtered":
        return FILTER_LABELS.get(verdict.get("filter") or "", verdict.get("filter") or "filter")
    if outcome == "unfit":
        problems = verdict.get("problems") or ()
        return "insufficient " + ", ".join(problems) if problems else "insufficient resources"
    return None


def reason_cells(cells: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Reason → the cells it excluded (Nomad #23810: counts that expand to cell ids)."""
    out: dict[str, list[str]] = {}
    for verdict in cells:
        reason = verdict_reason(verdict)
        if reason is not None:
            out.setdefault(reason, []).append(verdict["cell_id"])
    return out


def _parts(verdict: dict[str, Any]) -> dict[str, float]:
    return {p: float(verdict.get(p) or 0.0) for p in PARTS}


def runners_up(note: dict[str, Any], limit: int = RUNNERS_UP) -> list[dict[str, Any]]:
    """The best losing cells, each with its margin and the term that decided it (G10)."""
    cells = note.get("cells") or []
    winner_id = note.get("winner")
    winner = next((c for c in cells if c["cell_id"] == winner_id), None)
    if note.get("strategy", "diego") != "diego":
        candidates = note.get("candidates") or []
        losers = [c for c in cells if c["cell_id"] != winner_id and c.get("outcome") == "feasible"]
        losers.sort(key=lambda c: c["cell_id"] not in candidates)
        return [{"cell_id": c["cell_id"], "zone": c["zone"], "score": None, "margin": None,
                 "reached": True,
                 "deciding": ("lost the draw among the final candidates" if c["cell_id"] in candidates
                              else f"narrowed out by {note.get('strategy')}")}
                for c in losers[:limit]]
    losers = [c for c in cells if c.get("score") is not None and c["cell_id"] != winner_id]
    losers.sort(key=lambda c: c["score"])
    out = []
    for cell in losers[:limit]:
        entry = {"cell_id": cell["cell_id"], "zone": cell["zone"], "score": cell["score"],
                 "reached": cell.get("reached", True), "margin": None, "deciding": ""}
        if winner is None or winner.get("score") is None:
            out.append(entry)
            continue
        margin = cell["score"] - winner["score"]
        entry["margin"] = margin
        if not cell.get("reached", True):
            walked = ", ".join(note.get("chosen_zones") or [])
            count = (note.get("zone_counts") or {}).get(cell["zone"], 0)
            entry["deciding"] = (f"zone walk: {cell['zone']} has {count} instance"
                                 f"{'' if count == 1 else 's'}, {walked} walked first")
        elif margin == 0:
            entry["deciding"] = f"tie: {winner_id} is listed first"
        else:
            mine, theirs = _parts(cell), _parts(winner)
            term = max(PARTS, key=lambda p: mine[p] - theirs[p])
            entry["deciding"] = f"lost by {format_score(margin)}: {PART_LABELS[term]}"
        out.append(entry)
    return out


def explanation_summary(note: dict[str, Any]) -> dict[str, Any]:
    """What an older auction keeps per item: winner, 5 runners-up, reason counts."""
    if note.get("trimmed"):
        return note
    cells = note.get("cells") or []
    keep = {note.get("winner")} | {r["cell_id"] for r in runners_up(note)}
    summary = {k: v for k, v in note.items() if k not in ("cells", "candidates")}
    summary["cells"] = [c for c in cells if c["cell_id"] in keep]
    summary["reason_counts"] = {r: len(ids) for r, ids in reason_cells(cells).items()}
    summary["cell_count"] = len(cells)
    summary["trimmed"] = True
    return summary


def reason_counts(note: dict[str, Any]) -> dict[str, int]:
    if note.get("trimmed"):
        return dict(note.get("reason_counts") or {})
    return {r: len(ids) for r, ids in reason_cells(note.get("cells") or []).items()}


def walk_groups(note: dict[str, Any]) -> list[dict[str, Any]]:
    """The item's cells grouped in zone-walk order (auction.md 4.2, dashboard.md A5).

    The walked groups first, as recorded; then the groups the walk never reached, by
    ascending count, zones of equal count pooled; last, zones with no compatible cell.
    A task has one group: tasks ignore zones.
    """
    cells = note.get("cells") or []
    if note.get("kind") == "task" or note.get("strategy", "diego") != "diego":
        label = ("all zones: tasks ignore zones" if note.get("kind") == "task"
                 else f"all cells ({note.get('strategy')})")
        return [{"label": label, "zones": [], "walked": True, "first": True, "walk": False, "cells": cells}]
    counts = note.get("zone_counts") or {}
    compatible = list(dict.fromkeys(c["zone"] for c in cells if c.get("outcome") != "filtered"))
    walked = [list(g["zones"]) for g in note.get("zone_groups") or []]
    seen = {z for g in walked for z in g}
    rest = [z for z in compatible if z not in seen]
    pending = [[z for z in rest if counts.get(z, 0) == n]
               for n in sorted({counts.get(z, 0) for z in rest})]
    groups = []
    for i, zones in enumerate(walked + pending):
        n = counts.get(zones[0], 0)
        groups.append({"label": f"{', '.join(zones)}: {n} instance{'' if n == 1 else 's'}",
                       "zones": zones, "walked": i < len(walked), "first": i == 0, "walk": True,
                       "cells": [c for c in cells if c["zone"] in zones]})
    grouped = {z for g in groups for z in g["zones"]}
    leftover = [c for c in cells if c["zone"] not in grouped]
    if leftover:
        zones = list(dict.fromkeys(c["zone"] for c in leftover))
        # The filters ran on these cells; their zones had no compatible cell, so no walk.
        groups.append({"label": f"{', '.join(zones)}: no compatible cell", "zones": [], "walked": True,
                       "first": False, "walk": False, "cells": leftover})
    return groups


def lacking_cells(note: dict[str, Any]) -> dict[str, list[str]]:
    """Dimension or filter → the cells that lack it, for a failure (A6)."""
    out: dict[str, list[str]] = {}
    for cell in note.get("cells") or []:
        if cell.get("outcome") == "filtered":
            out.setdefault(FILTER_LABELS.get(cell.get("filter") or "", "filter"), []).append(cell["cell_id"])
        for problem in cell.get("problems") or ():
            out.setdefault(problem, []).append(cell["cell_id"])
    return out


# --- view models ----------------------------------------------------------------------

@dataclass(slots=True)
class Row:
    """One cell's line in the candidate table (A5)."""

    cell_id: str
    zone: str
    zone_count: int | None
    filters: list[tuple[str, str]]  # (filter label, "pass" / "fail" / "not checked")
    capacity: str
    outcome: str
    parts: dict[str, float] | None
    score: float | None
    reached: bool
    winner: bool
    candidate: bool = False


@dataclass(slots=True)
class Group:
    label: str
    walked: bool
    first: bool
    rows: list[Row]
    walk: bool = True  # False for tasks and other strategies: no zone walk


@dataclass(slots=True)
class StripItem:
    ident: str
    step: int
    kind: str
    lane: int
    memory_mb: int
    width_px: int
    caption: str
    outcome: str  # "placed" / "failed" once its step is reached, else ""
    current: bool
    badges: list[tuple[str, str]]  # (text, title)


@dataclass(slots=True)
class ItemStep:
    ident: str
    kind: str
    position: int
    lane: int
    memory_mb: int | None
    disk_mb: int | None
    winner: str | None
    score: float | None
    error: str | None
    notes: list[str]
    strategy: str
    rule: str
    detail: str
    groups: list[Group] = field(default_factory=list)
    top: list[Row] = field(default_factory=list)  # big auctions: the best rows only
    reasons: dict[str, int] = field(default_factory=dict)
    lacking: dict[str, list[str]] = field(default_factory=dict)
    runners_up: list[dict[str, Any]] = field(default_factory=list)
    cell_count: int = 0
    big: bool = False
    candidates: list[str] | None = None


@dataclass(slots=True)
class CommitLine:
    cell_id: str
    verdict: str  # "accepted" / "rejected" / "timed out"
    accepted: list[str]
    rejected: list[str]
    placed: list[str]


@dataclass(slots=True)
class Replay:
    run: AuctionRun
    step: int
    last: int
    stage: str  # "batch" / "item" / "commit"
    lanes: list[tuple[int, str, list[StripItem]]]
    minimap: list[dict[str, Any]] | None
    item: ItemStep | None
    commit: list[CommitLine]
    failures: dict[str, int]
    carried: int

    @property
    def back(self) -> int:
        return max(self.step - 1, 0)

    @property
    def forward(self) -> int:
        return min(self.step + 1, self.last)


def auction_list(limit: int = LIST_LIMIT) -> list[dict[str, Any]]:
    """A1: the newest auctions, without their heavy records; each says which world it ran
    in (a scenario or foundation load starts another, whose sim times restart at 0):
    ``world`` "this" or "earlier (N)", under the column "World"."""
    current = world_epoch()
    rows = list(AuctionRun.objects.order_by("-pk").values(
        "pk", "started_at", "trigger", "strategy", "go_compat", "items", "placed", "failed",
        "duration_ms", "detail", "world_epoch")[:limit])
    for row in rows:
        row["this_world"] = row["world_epoch"] == current
        row["world"] = "this" if row["this_world"] else f"earlier ({row['world_epoch']})"
    return rows


def auction_get(run_id: int) -> AuctionRun | None:
    return AuctionRun.objects.filter(pk=run_id).first()


def plan_auction_get(plan_id: int, number: int) -> AuctionRun | None:
    """One auction a plan's run made (plans.md 1.7), as the unsaved ``AuctionRun`` its
    record describes: the replay reads it exactly as it reads a live one."""
    record = PlanAuction.objects.filter(plan_id=plan_id, number=number).values_list("record", flat=True).first()
    if record is None:
        return None
    names = {f.name for f in AuctionRun._meta.concrete_fields} - {"id"}
    return AuctionRun(**{k: v for k, v in record.items() if k in names})


def plan_auction_details(plan_id: int) -> dict[int, str]:
    """The numbers of the plan's kept auctions, each with how much of its decision
    record is kept (full, summary or none), without reading the records."""
    return dict(PlanAuction.objects.filter(plan_id=plan_id).order_by("number")
                .values_list("number", "record__detail"))


def step_bounds(run: AuctionRun) -> int:
    """The last step: 0 is the batch, 1..n the items in order, n + 1 the commit (A4)."""
    return len(run.order) + 1


def clamp_step(run: AuctionRun, raw: Any) -> int:
    try:
        step = int(raw)
    except (TypeError, ValueError):
        return 0
    return min(max(step, 0), step_bounds(run))


def _lane(kind: str, ident: str, note: dict[str, Any] | None) -> int:
    if note is not None:
        return int(note.get("priority_group", 1))
    if kind == "task":
        return 2
    return 1 if ident.rsplit(".", 1)[-1] == "0" else 3


def _badges(meta: dict[str, Any]) -> list[tuple[str, str]]:
    badges = []
    if "attempts" in meta:
        error = meta.get("previous_error", "")
        badges.append((f"↻{meta['attempts']}", f'carried over; previous error: "{error}"'))
    if meta.get("evac"):
        badges.append(("evac", "evacuation replacement"
                       + (f" for {meta['from_cell']}" if meta.get("from_cell") else "")))
    elif meta.get("from_cell"):
        badges.append((f"from {meta['from_cell']}", f"orphaned by the failed cell {meta['from_cell']}"))
    return badges


def _strip(run: AuctionRun, step: int, notes: dict[str, dict[str, Any]]) -> tuple[list, list | None]:
    order = run.order
    batch = run.batch or {}
    biggest = max((int(m.get("memory_mb", 0)) for m in batch.values()), default=0) or 1
    if len(order) > BIG_ITEMS:
        lo, hi = max(step - 1 - STRIP_WINDOW, 0), step - 1 + STRIP_WINDOW + 1
    else:
        lo, hi = 0, len(order)
    lanes: dict[int, list[StripItem]] = {1: [], 2: [], 3: []}
    for position in range(max(lo, 0), min(hi, len(order))):
        ident = order[position]
        meta = batch.get(ident, {})
        kind = meta.get("kind") or (notes.get(ident, {}).get("kind")) or ("task" if "." not in ident else "lrp")
        memory = int(meta.get("memory_mb", 0))
        reached = position + 1 <= step
        outcome = ("placed" if ident in run.placements else "failed") if reached else ""
        caption = f"#{int(ident.rsplit('.', 1)[1]) + 1}" if kind == "lrp" and "." in ident else "task"
        lanes[_lane(kind, ident, notes.get(ident))].append(StripItem(
            ident=ident, step=position + 1, kind=kind, lane=_lane(kind, ident, notes.get(ident)),
            memory_mb=memory,
            width_px=max(STRIP_MIN_PX, round(memory * STRIP_MAX_PX / biggest)) if memory else STRIP_MIN_PX,
            caption=caption, outcome=outcome, current=position + 1 == step, badges=_badges(meta)))
    minimap = None
    if len(order) > BIG_ITEMS:
        size = math.ceil(len(order) / BIG_ITEMS)
        minimap = []
        for start in range(0, len(order), size):
            chunk = order[start:start + size]
            failed = sum(1 for i in chunk if i in run.failures)
            minimap.append({"step": start + 1, "until": start + len(chunk), "failed": failed,
                            "current": start < step <= start + len(chunk)})
    return [(n, title, lanes[n]) for n, title in LANES], minimap


def _row(verdict: dict[str, Any], note: dict[str, Any], walked: bool) -> Row:
    filters = []
    failed = verdict.get("filter") if verdict.get("outcome") == "filtered" else None
    state = "pass"
    for name in FILTERS:
        if name == failed:
            filters.append((FILTER_LABELS[name], "fail"))
            state = "not checked"
        else:
            filters.append((FILTER_LABELS[name], state))
    outcome = verdict.get("outcome", "")
    if outcome == "filtered":
        capacity = "not checked"
    elif outcome == "unfit":
        capacity = "lacks " + ", ".join(verdict.get("problems") or ())
    else:
        capacity = "fits"
    scored = verdict.get("score") is not None
    return Row(
        cell_id=verdict["cell_id"], zone=verdict["zone"],
        zone_count=(note.get("zone_counts") or {}).get(verdict["zone"]) if note.get("kind") == "lrp" else None,
        filters=filters, capacity=capacity, outcome=outcome,
        parts=_parts(verdict) if scored else None, score=verdict.get("score"),
        reached=verdict.get("reached", True) and walked,
        winner=verdict["cell_id"] == note.get("winner"),
        candidate=verdict["cell_id"] in (note.get("candidates") or ()))


def _origin_notes(meta: dict[str, Any]) -> list[str]:
    """Where a badged item came from (A3), spelled out on its step."""
    out = []
    if "attempts" in meta:
        n = meta["attempts"]
        out.append(f"↻{n}: carried over from {n} earlier auction{'' if n == 1 else 's'}; "
                   f'previous error: "{meta.get("previous_error", "")}"')
    if meta.get("evac"):
        out.append("evac: replacement for an instance evacuating"
                   + (f" from {meta['from_cell']}" if meta.get("from_cell") else ""))
    elif meta.get("from_cell"):
        out.append(f"from {meta['from_cell']}: replaces an instance orphaned by that failed cell")
    return out


def _notes_for(item: ItemStep) -> list[str]:
    out = []
    if item.kind == "task":
        out.append("tasks ignore zones: every compatible cell is scored")
    if item.error == ERR_IN_FLIGHT:
        out.append("the in-flight start cap was reached before this item: no cell was asked")
    elif item.error == ERR_NO_CELLS:
        out.append("no cell answered the state fetch")
    elif item.error == "":
        out.append("placed tentatively, then rejected by the cell at commit (empty error; carried over)")
    return out


def item_step(run: AuctionRun, position: int) -> ItemStep:
    """One item's step: its decision record reshaped for the candidate table (A5, A6)."""
    ident = run.order[position]
    notes = run.explanations or []
    note = notes[position] if position < len(notes) and notes[position].get("identifier") == ident else None
    if note is None:
        note = next((n for n in notes if n.get("identifier") == ident), None)
    meta = (run.batch or {}).get(ident, {})
    kind = meta.get("kind") or (note or {}).get("kind") or "lrp"
    error = run.failures.get(ident)
    strategy = (note or {}).get("strategy") or run.strategy
    item = ItemStep(
        ident=ident, kind=kind, position=position, lane=_lane(kind, ident, note),
        memory_mb=meta.get("memory_mb"), disk_mb=meta.get("disk_mb"),
        winner=run.placements.get(ident), score=run.scores.get(ident), error=error,
        notes=[], strategy=strategy, rule=STRATEGY_RULES.get(strategy, ""),
        detail=run.detail if note is not None else "none")
    item.notes = _origin_notes(meta) + _notes_for(item)
    if note is None:
        return item
    cells = note.get("cells") or []
    item.cell_count = int(note.get("cell_count", len(cells)))
    item.candidates = note.get("candidates")
    item.reasons = reason_counts(note)
    item.runners_up = runners_up(note)
    if error:
        item.lacking = lacking_cells(note) if not note.get("trimmed") else {}
    item.big = len(cells) > BIG_CELLS
    groups = walk_groups(note)
    if item.big:
        ranked = sorted((c for c in cells if c.get("score") is not None or c.get("outcome") == "feasible"),
                        key=lambda c: (c["cell_id"] != item.winner, c.get("score") or 0.0))
        walked_zones = {z for g in groups if g["walked"] for z in g["zones"]}
        item.top = [_row(c, note, not walked_zones or c["zone"] in walked_zones) for c in ranked[:TOP_ROWS]]
    else:
        item.groups = [Group(g["label"], g["walked"], g["first"],
                             [_row(c, note, g["walked"]) for c in g["cells"]], g["walk"]) for g in groups]
    return item


def cell_page(run: AuctionRun, position: int, page: int) -> tuple[list[tuple[str, Row]], bool]:
    """A8: 50 rows of a big auction's candidate table, in zone-walk order."""
    ident = run.order[position]
    note = next((n for n in run.explanations or [] if n.get("identifier") == ident), None)
    if note is None:
        return [], False
    rows = [(g["label"], _row(c, note, g["walked"])) for g in walk_groups(note) for c in g["cells"]]
    start = page * PAGE_ROWS
    return rows[start:start + PAGE_ROWS], start + PAGE_ROWS < len(rows)


def commit_lines(run: AuctionRun) -> list[CommitLine]:
    """A7: each winning cell's answer at commit."""
    lines = []
    for cell_id, answer in sorted((run.commit or {}).items()):
        placed = sorted(i for i, c in run.placements.items() if c == cell_id)
        if answer == "unreachable":
            lines.append(CommitLine(cell_id, "timed out", [], [], placed))
            continue
        accepted, rejected = list(answer.get("accepted", [])), list(answer.get("rejected", []))
        lines.append(CommitLine(cell_id, "rejected" if rejected else "accepted", accepted, rejected, placed))
    return lines


def replay(run: AuctionRun, step: int) -> Replay:
    notes = {n.get("identifier"): n for n in run.explanations or []}
    last = step_bounds(run)
    lanes, minimap = _strip(run, step, notes)
    stage = "batch" if step == 0 else "commit" if step == last else "item"
    return Replay(
        run=run, step=step, last=last, stage=stage, lanes=lanes, minimap=minimap,
        item=item_step(run, step - 1) if stage == "item" else None,
        commit=commit_lines(run) if stage == "commit" else [],
        failures=dict((run.failure_counts or {}).get("errors") or Counter(run.failures.values())),
        carried=len(run.carried_in or {}))


def item_lookup(ident: str, placed: bool | None = None) -> tuple[AuctionRun, int] | None:
    """The newest auction that placed (``placed=True``), failed (False) or either ``ident``."""
    query = Q()
    if placed is not False:
        query |= Q(placements__has_key=ident)
    if placed is not True:
        query |= Q(failures__has_key=ident)
    run = AuctionRun.objects.filter(query).order_by("-pk").first()
    if run is None or ident not in run.order:
        return None
    return run, run.order.index(ident)
