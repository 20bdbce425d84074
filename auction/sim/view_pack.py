"""A ``ClusterView`` as compact bytes and back, for a named foundation (plans.md 3.3).

Reading a 250,000-row capture again costs tens of seconds of JSON and checks; a plan that
starts from a named foundation cannot wait for that. The view's records become plain
tuples of builtin values (``marshal``: no code, no classes, nothing to execute) and zlib;
unpacking builds the same records, floats and all, bit for bit.
"""

from __future__ import annotations

import marshal
import zlib
from dataclasses import fields
from typing import Any

from auction.bbs import types as core
from auction.sim.cfdot import ClusterView
from auction.sim.loads import cell_loads
from auction.sim.model import SimApp, SimCell, SimTask

FORMAT = 1
_CELL = tuple(f.name for f in fields(SimCell))
_APP = tuple(f.name for f in fields(SimApp))
_ROW = tuple(f.name for f in fields(core.ActualLRP))
_TASK = tuple(f.name for f in fields(core.Task))
_SIM_TASK = tuple(f.name for f in fields(SimTask) if f.name != "task")


def _values(record: Any, names: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(getattr(record, n) for n in names)


def pack_view(view: ClusterView) -> bytes:
    data = (FORMAT, _CELL, _APP, _ROW, _TASK, _SIM_TASK, view.now, view.origin_ns,
            tuple(view.assumptions),
            [_values(c, _CELL) for c in view.cells], [_values(a, _APP) for a in view.apps],
            [_values(r, _ROW) for r in view.rows],
            [(_values(t.task, _TASK), _values(t, _SIM_TASK)) for t in view.tasks],
            dict(view.domains))
    return zlib.compress(marshal.dumps(data), 6)


def unpack_view(blob: bytes) -> ClusterView:
    """The view ``pack_view`` packed; ``ValueError`` when the bytes are not one."""
    try:
        data = marshal.loads(zlib.decompress(blob))
    except (zlib.error, ValueError, EOFError, TypeError) as exc:
        raise ValueError(f"not a packed cluster view ({exc})") from None
    if not isinstance(data, tuple) or data[:6] != (FORMAT, _CELL, _APP, _ROW, _TASK, _SIM_TASK):
        raise ValueError("a packed cluster view of another format")
    now, origin, assumptions, cells_v, apps_v, rows_v, tasks_v, domains = data[6:]
    cells = [SimCell(**dict(zip(_CELL, v, strict=True))) for v in cells_v]
    apps = [SimApp(**dict(zip(_APP, v, strict=True))) for v in apps_v]
    rows = [core.ActualLRP(*v) for v in rows_v]
    tasks = [SimTask(core.Task(*t), **dict(zip(_SIM_TASK, s, strict=True))) for t, s in tasks_v]
    loads = cell_loads([c.cell_id for c in cells], {c.cell_id: c.proxy_memory_mb for c in cells},
                       ((r.cell_id, r.process_guid, r.state) for r in rows),
                       {a.process_guid: (a.memory_mb, a.disk_mb) for a in apps},
                       ((t.task.cell_id, t.task_guid, t.memory_mb, t.disk_mb) for t in tasks
                        if t.task.state == core.TASK_RUNNING))
    return ClusterView(now=now, cells=cells, loads=loads, apps=apps, rows=rows, tasks=tasks,
                       domains=domains, events=(), assumptions=tuple(assumptions), origin_ns=origin)
