"""``python -m auction.engine.bench``: Diego's 250k placement scale, and 1/10 of it.

Full scale: 1,000 cells in 5 zones (30,720 MB memory, 102,400 MB disk, 250 containers
each) and 10,000 apps × 25 instances of 100 MB memory / 200 MB disk, all new, one batch.
1/10 scale: 100 cells, 1,000 apps (25,000 instances). Each scale runs in a fresh child
process so its peak memory (max RSS) is its own. At 1/10 scale the straightforward scan
(``reference.py``, the explanation path) runs too, for the speed-up and an identity check
of order, placements, errors and scores; ``--reference-full`` adds it at full scale (slow).
``--mode`` runs the documented order (``spec``), Go-compatibility mode (``go``,
auction.md 2.1) or both (the default). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from typing import Any

from .batch import dedupe, order_batch
from .commit import commit_all
from .quality import distribution_score, final_memory_in_use, memory_in_use
from .reference import schedule_reference
from .schedule import schedule
from .types import AuctionConfig, CellState, LRPWork, Resources

SCALES = {"full": (1000, 10_000), "tenth": (100, 1_000)}  # (cells, apps)
ZONES = 5
INSTANCES = 25


def build(cells: int, apps: int) -> tuple[list[CellState], list[LRPWork]]:
    cap = Resources(memory_mb=30_720, disk_mb=102_400, containers=250)
    cell_states = [CellState(cell_id=f"cell-{i}", zone=f"z{i % ZONES}", index=i // ZONES,
                             total=cap, available=cap) for i in range(cells)]
    work = [LRPWork(f"app-{a}", k, 100, 200, total_instances=INSTANCES)
            for a in range(apps) for k in range(INSTANCES)]
    return cell_states, work


MODES = {"spec": False, "go": True}


def run_scale(name: str, with_reference: bool, go_compat: bool = False) -> dict[str, Any]:
    n_cells, apps = SCALES[name]
    cells, work = build(n_cells, apps)
    config = AuctionConfig(go_compat=go_compat)
    start = time.perf_counter()
    ordered = order_batch(dedupe(work), go_compat)
    ordered_at = time.perf_counter()
    result = schedule(cells, ordered, config, ordered=True)
    placed_at = time.perf_counter()
    commit_all(result, cells)
    committed_at = time.perf_counter()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    place_s = placed_at - start
    report: dict[str, Any] = {
        "cells": n_cells, "zones": ZONES, "instances": len(work),
        "order_seconds": round(ordered_at - start, 3),
        "schedule_seconds": round(placed_at - ordered_at, 3),
        "order_and_place_seconds": round(place_s, 3),
        "commit_seconds": round(committed_at - placed_at, 3),
        "placements": len(result.placements),
        "placements_per_second": round(len(result.placements) / place_s),
        "peak_memory_mb": round(peak_mb, 1),
        "distribution_score_initial": distribution_score(memory_in_use(cells)),
        "distribution_score_final": distribution_score(final_memory_in_use(cells, result)),
        "failures": len(result.failures),
    }
    if with_reference:
        ref_start = time.perf_counter()
        reference = schedule_reference(cells, order_batch(dedupe(work), go_compat), config)
        ref_s = time.perf_counter() - ref_start
        commit_all(reference, cells)
        report["reference_seconds"] = round(ref_s, 3)
        report["speedup_vs_reference"] = round(ref_s / place_s, 1)
        report["identical_to_reference"] = (
            reference.order == result.order and reference.placements == result.placements
            and reference.failures == result.failures and reference.scores == result.scores)
    return report


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m auction.engine.bench")
    parser.add_argument("--scale", choices=["all", *SCALES], default="all")
    parser.add_argument("--reference-full", action="store_true",
                        help="also run the straightforward scan at full scale (minutes)")
    parser.add_argument("--mode", choices=["both", *MODES], default="both",
                        help="documented order (spec), Go-compatibility mode (go), or both")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        with_reference = args.scale == "tenth" or args.reference_full
        print(json.dumps(run_scale(args.scale, with_reference, MODES[args.mode])))
        return 0
    names = list(SCALES) if args.scale == "all" else [args.scale]
    modes = list(MODES) if args.mode == "both" else [args.mode]
    out: dict[str, Any] = {}
    for name in names:
        for mode in modes:
            cmd = [sys.executable, "-m", "auction.engine.bench", "--child", "--scale", name,
                   "--mode", mode]
            if args.reference_full:
                cmd.append("--reference-full")
            child = subprocess.run(cmd, capture_output=True, text=True, check=True)
            out[name if len(modes) == 1 else f"{name} ({mode})"] = json.loads(child.stdout)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
