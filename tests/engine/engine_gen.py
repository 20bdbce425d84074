"""Random clusters and batches as case documents (conformance.md 1 format).

Small integers and repeated cell shapes on purpose: they produce exact score ties,
zones with equal counts, cells that stop fitting, and every filter error.
"""

from __future__ import annotations

import random
from typing import Any

ROOTFSES = ["preloaded:cflinuxfs4", "preloaded:cflinuxfs4", "preloaded:cflinuxfs4",
            "preloaded:cflinuxfs3", "docker:///library/nginx", "preloaded+layer:cflinuxfs4?x=1",
            "PRELOADED:cflinuxfs4", "preloaded:/abs", "nope", "oci://x", "1bad:stack",
            # Rejected by Go's url.Parse (auction.md 3): they match no cell.
            "docker://registry:abc/image", "docker:///library/%zz", "docker://[::1/img",
            "docker://ho st/x", "docker:\x7f", "preloaded:cflinuxfs4#%zz",
            # Parse fine: a numeric port, an upper-case scheme, a fragment.
            "docker://registry:5000/image", "DOCKER:///x", "preloaded:cflinuxfs4#frag"]
DRIVERS = [[], [], [], ["nfs"], ["smb"], ["nfs", "smb"]]
TAGS = [[], [], [], ["a"], ["b"], ["a", "b"], ["b", "a", "c"]]


def random_case(rng: random.Random, *, cells: int | None = None, items: int | None = None,
                config: bool = True, filters: bool = True, apps: int | None = None,
                uniform: bool = False) -> dict[str, Any]:
    """``apps`` fixes the number of process guids; ``uniform`` gives every cell and item one
    shape, so that exact ties (also among cells holding the process) are everywhere."""
    n_cells = rng.randint(0, 10) if cells is None else cells
    n_items = rng.randint(0, 30) if items is None else items
    zones = [f"z{i}" for i in range(rng.randint(1, 4))]
    guids = [f"app{i}" for i in range(apps or rng.randint(1, 6))]
    shapes = [(rng.choice([100, 200, 1000, 1024]), rng.choice([100, 500, 1000]),
               rng.choice([1, 2, 3, 5, 10])) for _ in range(3)]
    if uniform:
        shapes = shapes[:1]
    cell_docs = []
    for i in range(n_cells):
        mem, disk, cont = rng.choice(shapes)
        doc: dict[str, Any] = {"cell_id": f"c{i}", "zone": rng.choice(zones),
                               "total": {"memory_mb": mem, "disk_mb": disk, "containers": cont}}
        if not uniform and rng.random() < 0.5:
            doc["available"] = {"memory_mb": rng.randint(0, mem), "disk_mb": rng.randint(0, disk),
                                "containers": rng.randint(0, cont)}
        if rng.random() < 0.5:
            doc["index"] = rng.randint(0, 4)
        if rng.random() < 0.3:
            doc["starting_containers"] = rng.randint(0, 3)
        if rng.random() < 0.6:
            doc["lrps"] = [rng.choice(guids) for _ in range(rng.randint(0, 4))]
        if rng.random() < 0.3:
            doc["tasks"] = [f"old-task{j}" for j in range(rng.randint(0, 3))]
        if rng.random() < 0.3:
            doc["proxy_memory_mb"] = rng.choice([0, 5, 32])
        if filters:
            if rng.random() < 0.2:
                doc["preloaded_rootfses"] = rng.choice([[], ["cflinuxfs3"], ["cflinuxfs4", "/abs"]])
            if rng.random() < 0.2:
                doc["rootfs_providers"] = rng.choice([[], ["docker", "oci"]])
            if rng.random() < 0.3:
                doc["volume_drivers"] = rng.choice(DRIVERS)
            if rng.random() < 0.2:
                doc["placement_tags"] = rng.choice(TAGS)
            if rng.random() < 0.2:
                doc["optional_placement_tags"] = rng.choice(TAGS)
        cell_docs.append(doc)
    sizes = [(rng.choice([0, 10, 50, 100, 256]), rng.choice([0, 10, 100, 300])) for _ in range(3)]
    if uniform:
        sizes = sizes[:1]
    lrps, tasks = [], []
    for _ in range(n_items):
        mem, disk = rng.choice(sizes) if uniform or rng.random() < 0.8 else (rng.randint(0, 600),
                                                                    rng.randint(0, 600))
        item: dict[str, Any] = {"memory_mb": mem, "disk_mb": disk}
        if filters and rng.random() < 0.25:
            item["rootfs"] = rng.choice(ROOTFSES)
        if filters and rng.random() < 0.15:
            item["volume_drivers"] = rng.choice(DRIVERS)
        if filters and rng.random() < 0.15:
            item["placement_tags"] = rng.choice(TAGS)
        if rng.random() < 0.75:
            lrps.append({"process_guid": rng.choice(guids), "index": rng.randint(0, 5), **item})
        else:
            tasks.append({"task_guid": f"t{rng.randint(0, n_items)}", **item})
    case: dict[str, Any] = {"cells": cell_docs, "lrps": lrps, "tasks": tasks}
    if config and rng.random() < 0.6:
        case["config"] = {
            "starting_container_weight": rng.choice([0.25, 0.25, 0.0, 1.0, 0.1, -0.25]),
            "bin_pack_first_fit_weight": rng.choice([0.0, 0.0, 0.1, 1.0, -0.5]),
            "starting_container_count_maximum": rng.choice([0, 0, 0, 3, 8, -1]),
            "locality_offset": rng.choice([1000, 1000, 0, 1, 7, -3]),
            "go_compat": rng.random() < 0.3,
        }
    return case


def scale_case(cells: int, zones: int, apps: int, instances: int) -> dict[str, Any]:
    """Diego's published scale shape (auction.md, bench): equal cells, all-new instances."""
    return {
        "cells": [{"cell_id": f"cell-{i}", "zone": f"z{i % zones}",
                   "total": {"memory_mb": 30720, "disk_mb": 102400, "containers": 250}}
                  for i in range(cells)],
        "lrps": [{"process_guid": f"app-{a}", "index": k, "memory_mb": 100, "disk_mb": 200}
                 for a in range(apps) for k in range(instances)],
        "tasks": [],
    }
