"""Drive the simulated cluster from a shell, as an operator drives Diego with cfdot.

    manage.py diego status [--json]
    manage.py diego desire GUID --instances N [--memory MB] [--disk MB] [--domain D] [--rootfs URL]
    manage.py diego scale GUID N
    manage.py diego crash GUID INDEX
    manage.py diego fail-cell CELL | restore-cell CELL | drain-cell CELL
    manage.py diego fail-zone ZONE | restore-zone ZONE
    manage.py diego domain NAME TTL
    manage.py diego clock [--speed X] [--pause] [--resume] [--step S]
    manage.py diego auction [--go-compat on|off] [--strategy S]   # the auctioneer's settings
    manage.py diego advance        # advance reps and convergence to the clock's now, run auctions
    manage.py diego dump [--no-events]   # the live cluster as cfdot prints one (JSON Lines)
    manage.py diego dump --dir DIR       # one file per cfdot command (import_cfdot reads them back)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import redis
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError, InterfaceError, OperationalError

from auction.engine import STRATEGIES
from auction.models import ActualLRP, AuctionRun, Cell, ConvergenceRun, PendingWork, SimClock, Task
from auction.selectors.auction_settings import auction_settings
from auction.selectors.clock import clock_view
from auction.services import cells, clock, domains, lrps
from auction.services.auction_settings import auction_settings_update
from auction.services.errors import BBSError
from auction.services.retry import is_lock_error
from auction.services.sim import auctioneer_run, sim_advance
from auction.services.store import DbStore
from auction.sim.cfdot import COMMAND_FILES, dump_lines, dump_records
from auction.sim.chaos import ACTIONS, ChaosError
from auction.sim.clock import ClockError

# The CLI's verbs for the registry's actions (cfdot-like: verb-object).
CHAOS_VERBS = {"cell_fail": "fail-cell", "cell_restore": "restore-cell", "cell_drain": "drain-cell",
               "zone_fail": "fail-zone", "zone_restore": "restore-zone"}
CHAOS_BY_VERB = {CHAOS_VERBS.get(name, name.replace("_", "-")): name for name in ACTIONS}


def quiet_broken_pipe() -> None:
    """The reader of our output went away (``| head``): stop without a traceback."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def one_line(message: object) -> str:
    """The first line of an error's text: the CLI prints one line, never a traceback."""
    text = str(message).strip()
    return text.splitlines()[0] if text else type(message).__name__


class OneLineParser(CommandParser):
    """Bad arguments: one line on stderr (``diego scale: error: ...``) and exit 2, not the
    usage block (``--help`` still prints it)."""

    def error(self, message: str) -> NoReturn:
        if self.called_from_command_line:
            sys.stderr.write(f"{self.prog}: error: {one_line(message)}\n")
            sys.exit(2)
        raise CommandError(f"Error: {one_line(message)}")


class Command(BaseCommand):
    help = "Operate the simulated Diego cluster (see the module docstring for the verbs)."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.__class__ = OneLineParser  # the subparsers are made one already
        return parser

    def add_arguments(self, parser: CommandParser) -> None:
        verbs = parser.add_subparsers(dest="verb", required=True, parser_class=OneLineParser)
        status = verbs.add_parser("status")
        status.add_argument("--json", action="store_true")
        status.add_argument("--details", action="store_true",
                            help="with --json: recent auctions and convergence passes too")
        desire = verbs.add_parser("desire")
        desire.add_argument("guid")
        desire.add_argument("--instances", type=int, default=1)
        desire.add_argument("--memory", type=int, default=256)
        desire.add_argument("--disk", type=int, default=1024)
        desire.add_argument("--domain", default="cf-apps")
        desire.add_argument("--start-delay", type=float, default=3.0)
        desire.add_argument("--rootfs", default="preloaded:cflinuxfs4")
        # Chaos: one verb per action of the registry (auction.sim.chaos).
        for action in ACTIONS.values():
            if not action.dashboard:
                continue
            verb = verbs.add_parser(CHAOS_VERBS.get(action.name, action.name.replace("_", "-")),
                                    help=action.label.lstrip("✗✓⇢ "))
            for param in action.params:
                verb.add_argument(param.name, type=int if param.kind in ("count", "index") else str)
        domain = verbs.add_parser("domain")
        domain.add_argument("name")
        domain.add_argument("ttl", type=float)
        clk = verbs.add_parser("clock")
        clk.add_argument("--speed", type=float)
        clk.add_argument("--pause", action="store_true")
        clk.add_argument("--resume", action="store_true")
        clk.add_argument("--step", type=float)
        verbs.add_parser("advance")
        dump = verbs.add_parser("dump", help="print the live cluster as cfdot does (JSON Lines)")
        dump.add_argument("--no-events", action="store_true")
        dump.add_argument("--dir", help="write one file per cfdot command into DIR (no events)")
        auction = verbs.add_parser("auction", help="show or change the auctioneer's settings")
        auction.add_argument("--go-compat", choices=("on", "off"),
                             help="Go-compatibility mode (auction.md 2.1)")
        auction.add_argument("--strategy", choices=STRATEGIES)

    def handle(self, *args: Any, **options: Any) -> None:
        verb = options["verb"]
        try:
            self._dispatch(verb, options)
        except BrokenPipeError:
            quiet_broken_pipe()  # `diego dump | head`: the reader left; not an error
        except (BBSError, ClockError, ChaosError) as exc:
            named = " ".join(str(options[k]) for k in ("guid", "process_guid", "cell", "zone", "name", "index")
                             if options.get(k) is not None)
            raise CommandError(f"{verb} {named}: ".replace(" :", ":")
                               + one_line(getattr(exc, "message", "") or exc)) from None
        except redis.RedisError as exc:
            raise CommandError(
                f"Redis is not answering ({one_line(exc)}); start the app with `make run` "
                "or point REDIS_URL at a running server"
            ) from None
        except (OperationalError, InterfaceError) as exc:
            if is_lock_error(exc):
                raise CommandError(f"the database stayed locked by another writer ({one_line(exc)}); "
                                   "try again") from None
            raise CommandError(f"the database is not answering ({one_line(exc)}); check "
                               "DATABASE_URL") from None
        except DatabaseError as exc:
            raise CommandError(f"the database refused it ({one_line(exc)})") from None

    def _dispatch(self, verb: str, o: dict[str, Any]) -> None:
        source = "cli"
        if verb in CHAOS_BY_VERB:
            action = ACTIONS[CHAOS_BY_VERB[verb]]
            done = cells.chaos_run(action.name, {p.name: o[p.name] for p in action.params},
                                   source=source)
            self.stdout.write(done)
        elif verb == "status":
            self._status(as_json=o["json"], details=o["details"])
        elif verb == "desire":
            lrps.desired_lrp_desire({
                "process_guid": o["guid"], "domain": o["domain"], "instances": o["instances"],
                "memory_mb": o["memory"], "disk_mb": o["disk"], "start_delay_s": o["start_delay"],
                "rootfs": o["rootfs"]},
                source=source)
            # One line saying what was done (issue 16: a success is not silent).
            self.stdout.write(f"desired {o['guid']}: {o['instances']} x {o['memory']} MB in domain {o['domain']}")
        elif verb == "domain":
            domains.domain_upsert(o["name"], o["ttl"], source=source)
            self.stdout.write(f"domain {o['name']} fresh for {o['ttl']:g} s")
        elif verb == "clock":
            if o["speed"] is not None:
                clock.clock_set_speed(o["speed"])
            if o["pause"]:
                clock.clock_pause()
            if o["step"] is not None:
                clock.clock_step(o["step"])
            if o["resume"]:
                clock.clock_resume()
            view = clock_view()
            self.stdout.write(f"sim {view.display} ({'paused' if view.paused else f'{view.speed:g}x'})")
        elif verb == "auction":
            changes: dict[str, Any] = {}
            if o["go_compat"] is not None:
                changes["go_compat"] = o["go_compat"] == "on"
            if o["strategy"] is not None:
                changes["placement_strategy"] = o["strategy"]
            row = (auction_settings_update(changes, source=source) if changes
                   else auction_settings())
            order = "Go order (go_compat on)" if row.go_compat else "documented order (go_compat off)"
            self.stdout.write(f"auctioneer: {row.placement_strategy}, {order}, "
                              f"in-flight cap {row.starting_container_count_maximum or 'off'}")
        elif verb == "dump":
            view = DbStore().cluster_view()
            if o["dir"]:
                self._dump_dir(view, o["dir"])
                return
            for line in dump_lines(view, events=not o["no_events"]):
                self.stdout.write(line)
        elif verb == "advance":
            report = sim_advance()
            placed = sum(s.placed for s in auctioneer_run())
            self.stdout.write(f"advanced to {report.now if report else '?'}; placed {placed}")

    def _dump_dir(self, view: Any, directory: str) -> None:
        target = Path(directory)
        try:
            target.mkdir(parents=True, exist_ok=True)
            handles = {c: open(target / name, "w", encoding="utf-8") for c, name in COMMAND_FILES.items()}
        except OSError as exc:
            raise CommandError(f"{directory}: {exc.strerror}") from None
        counts = dict.fromkeys(COMMAND_FILES, 0)
        try:
            for command, line in dump_records(view):
                handles[command].write(line + "\n")
                counts[command] += 1
        finally:
            for handle in handles.values():
                handle.close()
        self.stdout.write(", ".join(f"{COMMAND_FILES[c]}: {n}" for c, n in counts.items()))

    def _status(self, *, as_json: bool, details: bool = False) -> None:
        view = clock_view()
        data = {
            "now": view.now,
            "paused": view.paused,
            "next_convergence_at": SimClock.objects.get(pk=1).next_convergence_at,
            "cells": [
                {"cell_id": c.cell_id, "zone": c.zone.name, "state": c.state,
                 "presence": c.has_presence(view.now)}
                for c in Cell.objects.select_related("zone")
            ],
            "actual_lrps": [
                {"process_guid": a.desired_id, "index": a.index, "presence": a.presence,
                 "state": a.state, "cell_id": a.cell_id, "crash_count": a.crash_count,
                 "since": a.since, "placement_error": a.placement_error}
                for a in ActualLRP.objects.order_by("desired_id", "index", "presence")
            ],
            "tasks": [{"task_guid": t.task_guid, "state": t.state, "cell_id": t.cell_id,
                       "failed": t.failed, "failure_reason": t.failure_reason}
                      for t in Task.objects.all()],
            "pending_work": PendingWork.objects.count(),
            "auctions": AuctionRun.objects.count(),
            "convergence_passes": ConvergenceRun.objects.count(),
        }
        if details:
            data["auction_runs"] = [
                {"id": r.id, "wall_started": r.wall_started, "duration_ms": r.duration_ms,
                 "placements": r.placements, "failures": r.failures, "order": r.order}
                for r in AuctionRun.objects.order_by("id")
            ]
            data["passes"] = [{"at": p.at, "lrp": p.lrp, "metrics": p.metrics}
                              for p in ConvergenceRun.objects.order_by("id")]
        if as_json:
            self.stdout.write(json.dumps(data))
            return
        self.stdout.write(f"sim {view.display}; {data['auctions']} auctions, "
                          f"{data['convergence_passes']} passes, {data['pending_work']} waiting")
        for a in data["actual_lrps"]:
            self.stdout.write(f"  {a['process_guid']}.{a['index']:<3} {a['presence']:<10} "
                              f"{a['state']:<9} {a['cell_id']:<10} crashes={a['crash_count']}")
