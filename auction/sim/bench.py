"""How fast the in-memory cluster runs: sim-seconds per wall-second (``python -m auction.sim.bench``).

A synthetic cluster per size (3 AZs, 8 GB cells, 10 instances per cell on average, in
apps of 1-5 instances of 128-1024 MB, 2 % of instances crashing once a minute) runs a
cold start, then steady state with a zone failure and restore, for the sim time
given. ``--per-cell`` packs more instances on each cell, its memory and disk grown in
proportion so the same share of the cluster is used; ``--real-size`` is issue 14's
figure: 1,000 cells / 100,000 instances for 600 sim-s. Prints figures; asserts nothing
(performance is measured, not tested).

The figures and their history are in docs/performance.md.
"""

from __future__ import annotations

import argparse
import random
import time

from auction.engine import AuctionConfig
from auction.sim.memory import SimApp, SimCell, World

ZONES = ("z1", "z2", "z3")


#: The density the cell sizes below were chosen for (8 GB, 32 GB of disk).
BASE_PER_CELL = 10


def build(cells: int, *, seed: int = 0, strategy: str = "diego", per_cell: int = BASE_PER_CELL) -> World:
    rng = random.Random(seed)
    world = World(seed=seed, config=AuctionConfig(placement_strategy=strategy, seed=seed))
    grow = max(1, per_cell / BASE_PER_CELL)
    for n in range(cells):
        world.add_cell(SimCell(f"cell-{n:04d}", ZONES[n % len(ZONES)], n // len(ZONES),
                               memory_mb=int(8192 * grow), disk_mb=int(32768 * grow)))
    world.upsert_domain("cf-apps", 0)
    instances, target, app = 0, cells * per_cell, 0
    while instances < target:
        count = rng.randint(1, 5)
        world.desire_lrp(SimApp(
            f"app-{app:05d}", instances=count, memory_mb=rng.choice((128, 256, 512, 1024)),
            disk_mb=1024, start_delay_s=rng.uniform(2, 10),
            crash_probability=0.02, crash_after_s=60.0,
        ))
        instances += count
        app += 1
    world.schedule_action(120, "zone_fail", zone="z3")
    world.schedule_action(300, "zone_restore", zone="z3")
    return world


def measure(cells: int, sim_seconds: float, strategy: str = "diego",
            per_cell: int = BASE_PER_CELL) -> dict[str, float]:
    started = time.perf_counter()
    world = build(cells, strategy=strategy, per_cell=per_cell)
    built = time.perf_counter()
    cpu_start = time.process_time()
    events = world.run_until(sim_seconds)
    wall = time.perf_counter() - built
    cpu = time.process_time() - cpu_start
    return {
        "cells": cells, "instances": len(world.rows), "sim_s": sim_seconds, "build_s": built - started,
        "wall_s": wall, "rate": sim_seconds / wall if wall > 0 else float("inf"), "events": events,
        # CPU seconds too: on a shared machine the wall figure measures the neighbours.
        "cpu_s": cpu, "cpu_rate": sim_seconds / cpu if cpu > 0 else float("inf"),
        "auctions": len(world.auctions), "passes": len(world.passes),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m auction.sim.bench", description=__doc__)
    parser.add_argument("--cells", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--sim-seconds", type=float, default=600.0)
    parser.add_argument("--strategy", default="diego")
    parser.add_argument("--per-cell", type=int, default=BASE_PER_CELL,
                        help="instances per cell on average (cells grow in proportion)")
    parser.add_argument("--real-size", action="store_true",
                        help="issue 14's figure: 1,000 cells x 100 instances, 600 sim s")
    args = parser.parse_args(argv)
    if args.per_cell < 1:
        parser.error("--per-cell must be at least 1")
    if args.real_size:
        args.cells, args.per_cell, args.sim_seconds = [1000], 100, 600.0
    print(f"in-memory cluster, strategy {args.strategy}, {args.per_cell} instances per cell, "
          f"{args.sim_seconds:g} sim s each (cold start, z3 fails at 120 s, back at 300 s)")
    print(f"{'cells':>6} {'instances':>9} {'events':>8} {'auctions':>8} {'passes':>6} "
          f"{'build s':>8} {'wall s':>8} {'sim-s per wall-s':>17} {'cpu s':>7} {'sim-s per cpu-s':>16}")
    for cells in args.cells:
        r = measure(cells, args.sim_seconds, args.strategy, args.per_cell)
        print(f"{r['cells']:>6} {r['instances']:>9} {r['events']:>8} {r['auctions']:>8} {r['passes']:>6} "
              f"{r['build_s']:>8.2f} {r['wall_s']:>8.2f} {r['rate']:>17.1f} {r['cpu_s']:>7.2f} {r['cpu_rate']:>16.1f}")


if __name__ == "__main__":
    main()
