"""Benchmark: import a 1,000-cell / 250,000-instance foundation (plans.md 3.7). Prints JSON.

    DATABASE_URL=postgres://… DJANGO_DEBUG=0 python -m bench.foundation --wipe

Makes a synthetic capture (``make_foundation``, in memory), reads it (``read_capture``),
writes it into the live cluster (``foundation_load``, one transaction), then dumps it back
(``cluster_view`` + the cfdot lines). Each figure is wall seconds. It replaces the cluster
of the database it runs against: hence --wipe.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from django.core.management import call_command
from django.db import connection

from auction.live.publish import suppressed
from auction.services.foundations import foundation_load
from auction.services.store import DbStore
from auction.sim.cfdot import COMMAND_FILES, dump_records
from auction.sim.cfdot_read import read_capture, summary
from auction.sim.foundation_gen import FoundationShape, capture_files, make_foundation


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.foundation",
        description="Time importing a large cfdot capture (replaces the live cluster: needs --wipe).")
    parser.add_argument("--wipe", action="store_true", help="agree to replace the live cluster")
    parser.add_argument("--cells", type=int, default=1000)
    parser.add_argument("--zones", type=int, default=3)
    parser.add_argument("--apps", type=int, default=10_000)
    parser.add_argument("--instances", type=int, default=250_000)
    parser.add_argument("--seed", type=int, default=7)
    return parser


def main(argv: list[str] | None = None) -> None:
    o = vars(parser().parse_args(argv))
    if not o["wipe"]:
        parser().error("this replaces the live cluster; run it with --wipe")
    # A fresh checkout (or a new bench database) has no tables yet: the cluster this
    # replaces starts from the current schema.
    call_command("migrate", interactive=False, verbosity=0)
    shape = FoundationShape(cells=o["cells"], zones=o["zones"], apps=o["apps"],
                            instances=o["instances"], seed=o["seed"])
    figures: dict[str, Any] = {"database": connection.vendor, "shape": {
        "cells": shape.cells, "zones": shape.zones, "apps": shape.apps, "instances": shape.instances,
        "seed": shape.seed}}
    started = time.perf_counter()
    files = capture_files(make_foundation(shape))
    blobs = [(COMMAND_FILES[c], "".join(line + "\n" for line in lines).encode()) for c, lines in files.items()]
    figures["generate_s"] = round(time.perf_counter() - started, 2)
    figures["capture_mb"] = round(sum(len(b) for _, b in blobs) / 1e6, 1)
    t0 = time.perf_counter()
    view = read_capture(blobs)
    figures["read_s"] = round(time.perf_counter() - t0, 2)
    t1 = time.perf_counter()
    with suppressed():
        foundation_load(view, source="bench")
    figures["write_s"] = round(time.perf_counter() - t1, 2)
    figures["import_s"] = round(time.perf_counter() - t0, 2)
    figures["summary"] = summary(view)
    t2 = time.perf_counter()
    lines = sum(1 for _ in dump_records(DbStore().cluster_view()))
    figures["dump_s"] = round(time.perf_counter() - t2, 2)
    figures["dump_lines"] = lines
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
