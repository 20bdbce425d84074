"""A straightforward, obviously-correct Diego auction, written from auction.md alone.

It shares no code with ``auction.engine`` but two ports of Go that have their own tests
against real Go output: ``gosort`` (for ``go_compat``, auction.md 2.1) and nothing else;
rootfs strings Go's ``url.Parse`` rejects are known here by a list (the generator only
draws from it). It reads case documents (plain dicts, the format of conformance.md 1) and
returns the case output (order, placements, failures, scores). Slow on purpose only where
obviousness wins: every item re-filters every cell and walks every cell's instance list,
as Diego's auctioneer does.
"""

from __future__ import annotations

import copy
import re
from typing import Any

LOCALITY_DEFAULT = 1000
#: auction.md 3: rootfs strings Go's url.Parse rejects (bad port, bad escape, unclosed
#: bracket, space in the host, a control character): they match no cell.
UNPARSABLE_ROOTFSES = frozenset({
    "docker://registry:abc/image", "docker:///library/%zz", "docker://[::1/img",
    "docker://ho st/x", "docker:\x7f", "preloaded:cflinuxfs4#%zz",
})


def _defaults(case: dict[str, Any]) -> tuple[dict, list, list, list]:
    config = {"starting_container_weight": 0.25, "bin_pack_first_fit_weight": 0.0,
              "starting_container_count_maximum": 0, "locality_offset": LOCALITY_DEFAULT,
              "go_compat": False}
    config.update(case.get("config", {}))
    cells = []
    for i, raw in enumerate(case.get("cells", [])):
        cell = {"index": i, "starting_containers": 0, "lrps": [], "tasks": [],
                "volume_drivers": [], "placement_tags": [], "optional_placement_tags": [],
                "preloaded_rootfses": ["cflinuxfs4"], "rootfs_providers": ["docker"],
                "proxy_memory_mb": 0}
        cell.update(copy.deepcopy(raw))
        cell.setdefault("available", dict(cell["total"]))
        cells.append(cell)
    work_defaults = {"rootfs": "preloaded:cflinuxfs4", "volume_drivers": [], "placement_tags": []}
    lrps = [{**work_defaults, **x, "kind": "lrp", "id": f"{x['process_guid']}.{x['index']}"}
            for x in case.get("lrps", [])]
    tasks = [{**work_defaults, **x, "kind": "task", "id": x["task_guid"]}
             for x in case.get("tasks", [])]
    return config, cells, lrps, tasks


def _first_occurrences(items: list[dict]) -> list[dict]:
    kept, seen = [], set()
    for item in items:
        if item["id"] not in seen:
            seen.add(item["id"])
            kept.append(item)
    return kept


def batch_order(lrps: list[dict], tasks: list[dict], go_compat: bool = False) -> list[dict]:
    """auction.md 2: index-0 instances, then tasks, then the rest; stable sorts.

    auction.md 2.1 (go_compat): Go's sort.Sort of the LRPs and of the tasks, then the
    LRPs before the first index > 0, the tasks, the rest (all LRPs after the tasks when
    none has index > 0).
    """
    lrps, tasks = _first_occurrences(lrps), _first_occurrences(tasks)
    if go_compat:
        from auction.engine.gosort import go_sort

        go_sort(lrps, lambda a, b: (a["memory_mb"] > b["memory_mb"] if a["index"] == b["index"]
                                    else a["index"] < b["index"]))
        go_sort(tasks, lambda a, b: a["memory_mb"] > b["memory_mb"])
        cut = next((n for n, x in enumerate(lrps) if x["index"] > 0), 0)
        return lrps[:cut] + tasks + lrps[cut:]
    group1 = sorted([x for x in lrps if x["index"] == 0], key=lambda x: -x["memory_mb"])
    group2 = sorted(tasks, key=lambda x: -x["memory_mb"])
    group3 = sorted([x for x in lrps if x["index"] > 0],
                    key=lambda x: (x["index"], -x["memory_mb"]))
    return group1 + group2 + group3


def rootfs_ok(cell: dict, rootfs: str) -> bool:
    if rootfs in UNPARSABLE_ROOTFSES or ":" not in rootfs:
        return False
    scheme, rest = rootfs.split(":", 1)
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme):
        return False
    scheme = scheme.lower()
    if scheme in ("preloaded", "preloaded+layer"):
        stack = re.split(r"[?#]", rest)[0]
        return not stack.startswith("/") and stack in cell["preloaded_rootfses"]
    return scheme in cell["rootfs_providers"]


def drivers_ok(cell: dict, drivers: list[str]) -> bool:
    return all(d in cell["volume_drivers"] for d in drivers)


def tags_ok(cell: dict, tags: list[str]) -> bool:
    r, o, d = set(cell["placement_tags"]), set(cell["optional_placement_tags"]), set(tags)
    return r.issubset(d) and d.issubset(r | o)


def filter_error(cells: list[dict], item: dict) -> str:
    a = [c for c in cells if rootfs_ok(c, item["rootfs"])]
    if not a:
        return "found no compatible cell for required rootfs"
    b = [c for c in a if drivers_ok(c, item["volume_drivers"])]
    if not b:
        return "found no compatible cell with required volume drivers"
    tags = item["placement_tags"]
    if len(tags) == 0:
        return "found no compatible cell with no placement tags"
    if len(tags) == 1:
        return f'found no compatible cell with placement tag "{tags[0]}"'
    quoted = ['"' + t + '"' for t in tags]
    return ("found no compatible cell with placement tags " + ", ".join(quoted[:-1])
            + " and " + quoted[-1])


def needed_memory(cell: dict, item: dict) -> int:
    return item["memory_mb"] + (cell["proxy_memory_mb"] if item["kind"] == "lrp" else 0)


def problems_of(cell: dict, item: dict) -> set[str]:
    avail = cell["available"]
    problems = set()
    if avail["disk_mb"] < item["disk_mb"]:
        problems.add("disk")
    if avail["memory_mb"] < needed_memory(cell, item):
        problems.add("memory")
    if avail["containers"] < 1:
        problems.add("containers")
    return problems


def score_of(cell: dict, item: dict, config: dict, bin_index: int) -> float:
    total, avail = cell["total"], cell["available"]
    fm = 1.0 - (avail["memory_mb"] - needed_memory(cell, item)) / total["memory_mb"]
    fd = 1.0 - (avail["disk_mb"] - item["disk_mb"]) / total["disk_mb"]
    fc = 1.0 - (avail["containers"] - 1) / total["containers"]
    score = ((fm + fd) + fc) / 3.0
    score = score + cell["starting_containers"] * config["starting_container_weight"]
    if item["kind"] == "lrp":
        n_same = cell["lrps"].count(item["process_guid"])
        score = score + float(config["locality_offset"] * n_same)
        score = score + bin_index * config["bin_pack_first_fit_weight"]
    else:
        score = score + float(config["locality_offset"] * len(cell["tasks"]))
    return score


def by_index(members: list[dict], go_compat: bool) -> list[dict]:
    """A zone's cells by index: stable, or Go's sort.Sort with go_compat (auction.md 2.1)."""
    if go_compat:
        from auction.engine.gosort import go_sort

        members = list(members)
        go_sort(members, lambda a, b: a["index"] < b["index"])
        return members
    return sorted(members, key=lambda c: c["index"])


def bin_indices(cells: list[dict], weight: float, go_compat: bool) -> dict[int, int]:
    if weight <= 0:
        return {id(c): c["index"] for c in cells}
    result = {}
    for zone in {c["zone"] for c in cells}:
        members = by_index([c for c in cells if c["zone"] == zone], go_compat)
        for rank, cell in enumerate(members):
            result[id(cell)] = rank
    return result


def try_order(cells: list[dict], weight: float, go_compat: bool) -> list[dict]:
    """auction.md 4.6: with w_bin > 0 a zone's input positions go to its cells in index
    order; cells are then tried by position."""
    if weight <= 0:
        return cells
    out = list(cells)
    for zone in {c["zone"] for c in cells}:
        slots = [i for i, c in enumerate(cells) if c["zone"] == zone]
        for slot, cell in zip(slots, by_index([cells[i] for i in slots], go_compat), strict=True):
            out[slot] = cell
    return out


def run(case: dict[str, Any], commit: bool = True) -> dict[str, Any]:
    config, cells, lrps, tasks = _defaults(case)
    fetched = copy.deepcopy(cells)
    items = batch_order(lrps, tasks, config["go_compat"])
    bins = bin_indices(cells, config["bin_pack_first_fit_weight"], config["go_compat"])
    cells = try_order(cells, config["bin_pack_first_fit_weight"], config["go_compat"])
    cap = config["starting_container_count_maximum"]
    in_flight = sum(c["starting_containers"] for c in cells)
    placements: dict[str, str] = {}
    failures: dict[str, str] = {}
    scores: dict[str, float] = {}
    won: dict[str, list[dict]] = {}
    for item in items:
        if not cells:
            failures[item["id"]] = "unable to communicate to compatible cells"
            continue
        if cap > 0 and in_flight >= cap:
            failures[item["id"]] = "waiting to start instance: reached in-flight start limit"
            continue
        compatible = [c for c in cells if rootfs_ok(c, item["rootfs"])
                      and drivers_ok(c, item["volume_drivers"])
                      and tags_ok(c, item["placement_tags"])]
        if not compatible:
            failures[item["id"]] = filter_error(cells, item)
            continue
        if item["kind"] == "lrp":
            per_zone: dict[str, int] = {}
            for c in cells:  # all cells, compatible or not
                per_zone[c["zone"]] = per_zone.get(c["zone"], 0) + c["lrps"].count(
                    item["process_guid"])
            levels = sorted({per_zone[c["zone"]] for c in compatible})
            groups = [[c for c in compatible if per_zone[c["zone"]] == level] for level in levels]
        else:
            groups = [compatible]
        common = {"containers", "disk", "memory"}
        winner, best = None, 1e20
        for group in groups:
            for cell in group:
                problems = problems_of(cell, item)
                if problems:
                    common &= problems
                    continue
                s = score_of(cell, item, config, bins[id(cell)])
                if s < best:
                    winner, best = cell, s
            if winner is not None:
                break
        if winner is None:
            text = "insufficient resources"
            if common:
                text += ": " + ", ".join(sorted(common))
            failures[item["id"]] = text
            continue
        winner["available"]["memory_mb"] -= item["memory_mb"]
        winner["available"]["disk_mb"] -= item["disk_mb"]
        winner["available"]["containers"] -= 1
        winner["starting_containers"] += 1
        in_flight += 1
        if item["kind"] == "lrp":
            winner["lrps"].append(item["process_guid"])
        else:
            winner["tasks"].append(item["task_guid"])
        won.setdefault(winner["cell_id"], []).append(item)
        placements[item["id"]] = winner["cell_id"]
        scores[item["id"]] = best
    if commit:
        for cell in fetched:
            work = won.get(cell["cell_id"], [])
            proxy = cell["proxy_memory_mb"]
            lrp_work = sorted([w for w in work if w["kind"] == "lrp"], key=lambda w: -w["memory_mb"])
            task_work = [w for w in work if w["kind"] == "task"]
            # The rep's Perform: LRP memory alone, each passed one lowering the budget by
            # m + proxy, a 0 MB one included.
            remaining, requests, refused = cell["available"]["memory_mb"], [], []
            for w in lrp_work:
                if w["memory_mb"] + proxy <= remaining:
                    remaining -= w["memory_mb"] + proxy
                    requests.append(w)
                else:
                    refused.append(w)
            # The executor's AllocateContainers: the passed LRPs (a 0 MB container has no
            # limit, so no proxy is added to it), then the tasks, against the real free.
            free = dict(cell["available"])
            for w in requests + task_work:
                size = w["memory_mb"] + (proxy if w["kind"] == "lrp" and w["memory_mb"] else 0)
                if size <= free["memory_mb"] and w["disk_mb"] <= free["disk_mb"] \
                        and free["containers"] > 0:
                    free["memory_mb"] -= size
                    free["disk_mb"] -= w["disk_mb"]
                    free["containers"] -= 1
                else:
                    refused.append(w)
            for w in refused:
                del placements[w["id"]]
                del scores[w["id"]]
                failures[w["id"]] = ""
    return {"order": [x["id"] for x in items], "placements": placements,
            "failures": failures, "scores": scores}
