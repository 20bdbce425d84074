"""A synthetic Diego foundation, as a cfdot capture (plans.md 3.4).

For demos, tests and benchmarks where no real capture is at hand: cells in zones, some
of them an isolation segment (placement tags that only their apps ask for), apps whose
sizes and instance counts follow heavy-tailed distributions (a few big apps, a long tail
of small ones, as on a real foundation), instances placed zone by zone, and the untidy
parts a real capture has: a few evacuating cells with their EVACUATING rows and
replacements, SUSPECT rows on a cell whose presence is gone, crashed and unclaimed rows,
rows past a scale-down, a domain that has gone stale, and tasks in every state.
Deterministic for a seed: the same arguments give the same bytes.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass

from auction.bbs import types as core
from auction.sim.cfdot import NS, ClusterView, dump_records
from auction.sim.loads import cell_loads
from auction.sim.model import DRAINING, SimApp, SimCell, SimTask, evolve_cell

#: The capture's instant: 2026-06-10, a UNIX time in ns (plans.md 3.1), plus some ns.
CAPTURE_NS = 1_781_049_600_123_456_789
SEGMENTS = ("iso-seg-blue", "iso-seg-green")
MEMORY_SIZES = (64, 128, 256, 512, 768, 1024, 2048, 4096, 8192)
MEMORY_WEIGHTS = (10, 22, 26, 18, 6, 10, 5, 2, 1)
STALE_DOMAIN = "cf-legacy"


@dataclass(slots=True, frozen=True)
class FoundationShape:
    cells: int = 1000
    zones: int = 3
    apps: int = 10_000
    instances: int = 250_000
    seed: int = 0

    def check(self) -> None:
        if self.zones < 1 or self.cells < self.zones:
            raise ValueError("need at least one zone and one cell per zone")
        if self.apps < 1 or self.instances < self.apps:
            raise ValueError("need at least one app and one instance per app")


def _guid(rng: random.Random, length: int = 36) -> str:
    h = f"{rng.getrandbits(128):032x}"
    text = f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"
    return text[:length]


def _heavy_counts(rng: random.Random, total: int, parts: int) -> list[int]:
    """``parts`` positive counts summing to ``total``, Pareto-distributed (alpha 1.2)."""
    weights = [rng.paretovariate(1.2) for _ in range(parts)]
    scale = (total - parts) / sum(weights)
    counts = [1 + int(w * scale) for w in weights]
    short = total - sum(counts)
    order = sorted(range(parts), key=lambda i: -weights[i])
    i = 0
    while short > 0:
        counts[order[i % parts]] += 1
        short -= 1
        i += 1
    return counts


def make_foundation(shape: FoundationShape) -> ClusterView:
    """The foundation of ``shape`` (see the module docstring)."""
    shape.check()
    rng = random.Random(shape.seed)
    zones = [f"z{i + 1}" for i in range(shape.zones)]
    counts = _heavy_counts(rng, shape.instances, shape.apps)
    sizes = rng.choices(MEMORY_SIZES, MEMORY_WEIGHTS, k=shape.apps)
    demand = sum(c * m for c, m in zip(counts, sizes, strict=True))
    # Cells sized so the foundation runs at about 75% of its memory, in whole GB.
    memory = max(8192, math.ceil(demand / 0.75 / shape.cells / 1024) * 1024)
    containers = max(250, math.ceil(shape.instances * 1.4 / shape.cells))
    cells: list[SimCell] = []
    segment_cells = max(len(SEGMENTS), shape.cells // 12)
    for i in range(shape.cells):
        tags: tuple[str, ...] = ()
        if i < segment_cells:
            tags = (SEGMENTS[i % len(SEGMENTS)],)
        cells.append(SimCell(
            cell_id=_guid(rng), zone=zones[i % len(zones)], index=i, memory_mb=memory,
            disk_mb=memory * 4, containers=containers, preloaded_rootfses=("cflinuxfs4",),
            rootfs_providers=("docker",), placement_tags=tags,
            proxy_memory_mb=32 if i % 4 == 0 else 0))
    evacuating = {cells[-1 - k].cell_id for k in range(min(2, shape.cells // 4))}
    cells = [evolve_cell(c, state=DRAINING, evacuating_since=0.0, evacuation_synced_at=0.0)
             if c.cell_id in evacuating else c for c in cells]

    apps: list[SimApp] = []
    for n in range(shape.apps):
        segment = SEGMENTS[n % len(SEGMENTS)] if n % 20 == 7 else ""
        domain = STALE_DOMAIN if n % 500 == 13 else "cf-apps"
        memory_mb = sizes[n]
        apps.append(SimApp(
            process_guid=f"{_guid(rng)}-{_guid(rng)}", domain=domain, instances=counts[n],
            memory_mb=memory_mb, disk_mb=1024 if memory_mb <= 1024 else 2048,
            rootfs="docker:///cloudfoundry/app" if n % 9 == 4 else "preloaded:cflinuxfs4",
            placement_tags=(segment,) if segment else (), ports=(8080,),
            epoch=_guid(rng), tag=rng.randint(0, 9)))
    origin = (CAPTURE_NS // NS) * NS
    now = (CAPTURE_NS - origin) / NS

    def since(max_age_s: float) -> float:
        return ((CAPTURE_NS - int(rng.random() * max_age_s * NS)) - origin) / NS

    free = {c.cell_id: c.memory_mb for c in cells}
    by_pool: dict[tuple[str, str], list[SimCell]] = {}
    for cell in cells:
        if cell.cell_id not in evacuating:
            by_pool.setdefault((cell.zone, cell.placement_tags[0] if cell.placement_tags else ""), []).append(cell)
    rows: list[core.ActualLRP] = []

    def place(app: SimApp, index: int) -> str:
        tag = app.placement_tags[0] if app.placement_tags else ""
        for z in range(len(zones)):
            pool = by_pool.get((zones[(index + z) % len(zones)], tag), [])
            for _ in range(8 if pool else 0):
                cell = pool[rng.randrange(len(pool))]
                if free[cell.cell_id] >= app.memory_mb:
                    free[cell.cell_id] -= app.memory_mb
                    return cell.cell_id
        return ""

    def row(app: SimApp, index: int, state: str, cell_id: str = "", presence: str = core.ORDINARY,
            **extra: object) -> core.ActualLRP:
        on = state in (core.CLAIMED, core.RUNNING) and cell_id
        return core.ActualLRP(
            process_guid=app.process_guid, index=index, state=state, presence=presence,
            cell_id=cell_id if on else "", instance_guid=_guid(rng, 28) if on else "",
            domain=app.domain, since=since(864_000 if state == core.RUNNING else 600),
            address=f"10.0.{rng.randrange(1, 250)}.{rng.randrange(2, 250)}" if state == core.RUNNING else "",
            ports=((8080, 61000 + rng.randrange(4000)),) if state == core.RUNNING else (),
            modification_tag_epoch=_guid(rng), modification_tag_index=rng.randint(0, 5),
            **extra)  # type: ignore[arg-type]

    for n, app in enumerate(apps):
        for index in range(app.instances):
            cell_id = place(app, index)
            roll = rng.random()
            if cell_id and n % 250 == 11 and index == app.instances - 1:
                free[cell_id] += app.memory_mb  # a last instance the auction could not place
                cell_id = ""
            if not cell_id:
                rows.append(row(app, index, core.UNCLAIMED, placement_error="insufficient resources: memory"))
            elif roll < 0.004:
                free[cell_id] += app.memory_mb
                rows.append(row(app, index, core.CRASHED, crash_count=rng.randint(1, 12),
                                crash_reason="APP/PROC/WEB: Exited with status 1"))
            elif roll < 0.014:
                rows.append(row(app, index, core.CLAIMED, cell_id))
            else:
                rows.append(row(app, index, core.RUNNING, cell_id))
        if n % 400 == 3:  # scaled down, not yet converged (plans.md 3.1)
            rows.append(row(app, app.instances, core.RUNNING, place(app, app.instances)))
    # Evacuation (plans.md 3.1): the draining cells' instances, with their replacements.
    evac_apps = [a for a in apps if not a.placement_tags][:2 * len(evacuating) + 4]
    for k, app in enumerate(evac_apps):
        old = sorted(evacuating)[k % len(evacuating)] if evacuating else ""
        if not old:
            break
        rows = [r for r in rows if not (r.process_guid == app.process_guid and r.index == 0)]
        rows.append(row(app, 0, core.RUNNING, old, core.EVACUATING))
        rows.append(row(app, 0, core.CLAIMED, place(app, 0)))
    # Suspect (plans.md 3.1): a cell whose presence is gone; its rows and replacements.
    gone = _guid(rng)
    for app in [a for a in apps if not a.placement_tags][-3:]:
        rows = [r for r in rows if not (r.process_guid == app.process_guid and r.index == 0)]
        rows.append(row(app, 0, core.RUNNING, gone, core.SUSPECT))
        rows.append(row(app, 0, core.CLAIMED, place(app, 0)))
    rows = [r if r.cell_id or r.state not in (core.CLAIMED, core.RUNNING)
            else row_unclaimed(r) for r in rows]

    tasks = list(_tasks(rng, shape, cells, origin))
    task_loads = ((t.task.cell_id, t.task_guid, t.memory_mb, t.disk_mb) for t in tasks
                  if t.task.state == core.TASK_RUNNING)
    loads = cell_loads([c.cell_id for c in cells], {c.cell_id: c.proxy_memory_mb for c in cells},
                       ((r.cell_id, r.process_guid, r.state) for r in rows),
                       {a.process_guid: (a.memory_mb, a.disk_mb) for a in apps}, task_loads)
    return ClusterView(now=now, cells=cells, loads=loads, apps=apps, rows=rows, tasks=tasks,
                       domains={"cf-apps": None, "cf-tasks": None, "cf-app-staging": None},
                       events=(), origin_ns=origin)


def row_unclaimed(r: core.ActualLRP) -> core.ActualLRP:
    """A replacement that found no room stays UNCLAIMED with its placement error."""
    return core.ActualLRP(process_guid=r.process_guid, index=r.index, state=core.UNCLAIMED,
                          presence=r.presence, domain=r.domain, since=r.since,
                          placement_error="insufficient resources: memory",
                          modification_tag_epoch=r.modification_tag_epoch,
                          modification_tag_index=r.modification_tag_index)


def _tasks(rng: random.Random, shape: FoundationShape, cells: list[SimCell], origin: int) -> Iterator[SimTask]:
    states = (core.PENDING, core.TASK_RUNNING, core.COMPLETED, core.RESOLVING)
    healthy = [c for c in cells if c.state != DRAINING and not c.placement_tags]
    for n in range(max(len(states), shape.instances // 500)):
        state = states[n % len(states)]
        created = CAPTURE_NS - rng.randrange(1, 600) * NS - rng.randrange(NS)
        updated = min(CAPTURE_NS, created + rng.randrange(NS, 90 * NS))
        done = state in (core.COMPLETED, core.RESOLVING)
        staging = n % 3 == 0
        failed = done and n % 5 == 2
        yield SimTask(core.Task(
            task_guid=_guid(rng), state=state, domain="cf-app-staging" if staging else "cf-tasks",
            cell_id=rng.choice(healthy).cell_id if state == core.TASK_RUNNING and healthy else "",
            created_at=(created - origin) / NS, updated_at=(updated - origin) / NS,
            first_completed_at=(updated - origin) / NS if done else None, failed=failed,
            failure_reason="Exited with status 1" if failed else "",
            result='{"lifecycle_type":"buildpack"}' if done and staging and not failed else "",
            rejection_count=1 if state == core.PENDING and n % 8 == 0 else 0,
            rejection_reason="insufficient resources: memory" if state == core.PENDING and n % 8 == 0 else ""),
            memory_mb=1024 if staging else 512, disk_mb=4096 if staging else 1024,
            rootfs="preloaded:cflinuxfs4", duration_s=60.0)


def capture_files(view: ClusterView) -> dict[str, list[str]]:
    """The capture's lines per cfdot command."""
    out: dict[str, list[str]] = {}
    for command, line in dump_records(view):
        out.setdefault(command, []).append(line)
    return out
