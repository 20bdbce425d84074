"""``python -m auction.bbs.bench``: time the pure pass at the project's target size.

The target (bbs.md 4; the service budget is 5 s *with* the database) is 10,000
desired LRPs x 25 instances = 250,000 actual rows. The snapshot mixes what a real
pass meets: missing instances, crashed ones at every back-off stage, a lost cell
(suspects and replacements), stale UNCLAIMED rows, orphans, evacuating copies and a
stale domain holding extras. Prints JSON with the seconds of the pure pass.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from auction.bbs.convergence import converge
from auction.bbs.types import (
    CLAIMED,
    CRASHED,
    EVACUATING,
    PENDING,
    RUNNING,
    SUSPECT,
    TASK_RUNNING,
    UNCLAIMED,
    ActualLRP,
    DesiredLRP,
    Snapshot,
    Task,
)

NOW = 100_000.0


def build_snapshot(desired_count: int = 10_000, instances: int = 25, seed: int = 7) -> Snapshot:
    """A deterministic snapshot of about ``desired_count * instances`` actual rows."""
    rng = random.Random(seed)
    cells = [f"cell-{i}" for i in range(100)]
    lost_cell = "cell-lost"
    desired: list[DesiredLRP] = []
    actual: list[ActualLRP] = []
    for d in range(desired_count):
        guid = f"app-{d:05d}"
        domain = "cf-apps" if d % 10 else "cf-stale"
        desired.append(DesiredLRP(guid, domain, instances))
        for i in range(instances + (2 if d % 50 == 0 else 0)):  # a few extras
            roll = rng.random()
            if roll < 0.02:
                continue  # missing
            cell = rng.choice(cells)
            if roll < 0.05:
                row = ActualLRP(
                    guid,
                    i,
                    CRASHED,
                    domain=domain,
                    since=NOW - rng.uniform(0, 2000),
                    crash_count=rng.randint(1, 210),
                )
            elif roll < 0.07:
                row = ActualLRP(guid, i, UNCLAIMED, domain=domain, since=NOW - rng.uniform(0, 90))
            elif roll < 0.09:
                row = ActualLRP(
                    guid,
                    i,
                    RUNNING,
                    cell_id=lost_cell,
                    instance_guid=f"ig-{d}-{i}",
                    domain=domain,
                    since=NOW - 500,
                )
            elif roll < 0.10:
                row = ActualLRP(
                    guid,
                    i,
                    CLAIMED,
                    cell_id=cell,
                    instance_guid=f"ig-{d}-{i}",
                    domain=domain,
                    since=NOW - 5,
                )
            else:
                row = ActualLRP(
                    guid,
                    i,
                    RUNNING,
                    cell_id=cell,
                    instance_guid=f"ig-{d}-{i}",
                    domain=domain,
                    since=NOW - 3000,
                )
            actual.append(row)
            if roll > 0.99:
                # A suspect from an earlier loss or an evacuating copy, its cell
                # back or not.
                presence = SUSPECT if roll > 0.995 else EVACUATING
                copy_cell = rng.choice([lost_cell, cell])
                actual.append(ActualLRP(guid, i, RUNNING, presence, copy_cell, domain=domain))
    for o in range(200):  # orphans of a fresh domain
        actual.append(ActualLRP(f"orphan-{o}", 0, RUNNING, cell_id=cells[0], domain="cf-apps"))
    tasks = [
        Task(
            f"task-{t}",
            PENDING if t % 2 else TASK_RUNNING,
            cell_id=rng.choice(cells + [lost_cell]),
            created_at=NOW - rng.uniform(0, 3600),
        )
        for t in range(2_000)
    ]
    return Snapshot(
        now=NOW,
        cells=frozenset(cells),
        domains={"cf-apps": NOW + 60, "cf-stale": NOW - 1},
        desired=desired,
        actual=actual,
        tasks=tasks,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--desired", type=int, default=10_000)
    parser.add_argument("--instances", type=int, default=25)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    snapshot = build_snapshot(args.desired, args.instances)
    timings = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        result = converge(snapshot)
        timings.append(time.perf_counter() - started)
        if len(timings) < args.repeat:
            del result  # freeing the previous answer is not part of the next pass
    lrp = result.lrp
    print(
        json.dumps(
            {
                "desired": len(snapshot.desired),
                "actual": len(snapshot.actual),
                "tasks": len(snapshot.tasks),
                "seconds": round(min(timings), 4),
                "seconds_each": [round(t, 4) for t in timings],
                "start": len(result.start_request.lrps),
                "create": len(lrp.create),
                "retire": len(lrp.retire),
                "suspect": len(lrp.suspect),
                "unclaim": len(lrp.unclaim),
                "row_ops": len(lrp.ops),
                "events": len(result.events),
            }
        )
    )


if __name__ == "__main__":
    main()
