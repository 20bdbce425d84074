"""How fast plans and capacity answer on a big base (``python -m auction.sim.bench_plans``).

A synthetic steady-state foundation, built as a capture would describe it: ``cells``
cells of 256 GB / 500 containers in 3 zones, apps of heavy-tailed sizes (most 1-4
instances, a few hundreds) of 128 MB to 1 GB, every instance RUNNING, spread over the
zones as Diego's auction leaves them (round robin by zone, then the emptiest cell of the
zone). Then: the clone (``world_from_view``), a 600 s plan with a zone failure beside its
baseline, and "how many more 4 GB instances fit". Prints figures; asserts nothing
(performance is measured, not tested).

The figures and their history are in docs/performance.md.
"""

from __future__ import annotations

import argparse
import heapq
import random
import time

from auction.bbs import types as core
from auction.engine import AuctionConfig
from auction.sim.base import world_from_view
from auction.sim.capacity import capacity, work_shape
from auction.sim.cfdot import ClusterView
from auction.sim.model import Load, SimApp, SimCell
from auction.sim.plan_changes import plan_changes
from auction.sim.plans import plan_result, run_plan_worlds

ZONES = ("z1", "z2", "z3")
SIZES = (128, 256, 256, 512, 512, 1024)


def synthetic_view(cells: int, instances: int, *, seed: int = 0) -> ClusterView:
    rng = random.Random(seed)
    sim_cells = [SimCell(f"cell-{n:04d}", ZONES[n % 3], n // 3, memory_mb=262144, disk_mb=1048576,
                         containers=500) for n in range(cells)]
    free: dict[str, list[tuple[int, int, str]]] = {z: [] for z in ZONES}
    room = {c.cell_id: [c.memory_mb, c.containers] for c in sim_cells}
    for c in sim_cells:
        free[c.zone].append((0, c.index, c.cell_id))
    apps: list[SimApp] = []
    rows: list[core.ActualLRP] = []
    placed = 0
    n = 0
    while placed < instances:
        count = min(instances - placed, max(1, int(rng.paretovariate(1.2))))
        memory = rng.choice(SIZES)
        app = SimApp(f"app-{n:05d}", instances=count, memory_mb=memory, disk_mb=1024, epoch=f"e{n}")
        apps.append(app)
        for index in range(count):
            zone = ZONES[(n + index) % 3]
            heap = free[zone]
            skipped = []
            while heap:
                used, order, cell_id = heapq.heappop(heap)
                if room[cell_id][0] >= memory and room[cell_id][1] >= 1:
                    break
                skipped.append((used, order, cell_id))
            else:
                raise SystemExit(f"the synthetic cluster is full at {placed} instances: add cells")
            room[cell_id][0] -= memory
            room[cell_id][1] -= 1
            heapq.heappush(heap, (used + memory, order, cell_id))
            for entry in skipped:
                heapq.heappush(heap, entry)
            rows.append(core.ActualLRP(app.process_guid, index, core.RUNNING, cell_id=cell_id,
                                       instance_guid=f"{app.process_guid}-{index}", domain="cf-apps",
                                       since=0.0))
            placed += 1
        n += 1
    loads = {c.cell_id: Load() for c in sim_cells}
    return ClusterView(now=0.0, cells=sim_cells, loads=loads, apps=apps, rows=rows, tasks=[],
                       domains={"cf-apps": None}, events=[])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=1000)
    parser.add_argument("--instances", type=int, default=250_000)
    parser.add_argument("--horizon", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    view = synthetic_view(args.cells, args.instances, seed=args.seed)
    t1 = time.perf_counter()
    base = world_from_view(view, AuctionConfig(seed=args.seed), seed=args.seed, record_log=False)
    baseline = world_from_view(view, AuctionConfig(seed=args.seed), seed=args.seed, record_log=False)
    t2 = time.perf_counter()
    print(f"base: {len(view.cells)} cells, {len(view.apps)} apps, {len(view.rows)} instances "
          f"(built {t1 - t0:.1f} s, two clones in memory {t2 - t1:.2f} s)")
    shape = work_shape({"memory_mb": "4096", "disk_mb": "1024"})
    t3 = time.perf_counter()
    answer = capacity(base.cells.values(), base.loads(), base.now, shape, base.config)
    t4 = time.perf_counter()
    print(f"capacity (4 GB): {answer['fits']} more fit {answer['zones']}, then {answer['stopped_by']!r}: "
          f"{t4 - t3:.2f} s")
    changes = plan_changes([{"action": "fail_zone", "zone": "z2"}])
    t5, c5 = time.perf_counter(), time.process_time()
    run = run_plan_worlds(base, baseline, changes, args.horizon, sample=False)
    t6 = time.perf_counter()
    result = plan_result(run)
    t7, c7 = time.perf_counter(), time.process_time()
    print(f"(the clones are part of a plan's answer: {t2 - t1:.2f} s + run + result)")
    print(f"plan fail_zone z2, {args.horizon:g} s: run {t6 - t5:.1f} s, result {t7 - t6:.1f} s, "
          f"total {t7 - t5:.1f} s ({c7 - c5:.1f} cpu-s); {result['auctions_total']} auctions, {len(result['moved'])} moved, "
          f"{len(result['unplaced'])} unplaced, time to converge {result['time_to_converge']}")


if __name__ == "__main__":
    main()
