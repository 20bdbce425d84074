"""What if? Run a plan against the live cluster or a foundation (plans.md 1.5)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from auction.services.errors import BBSError
from auction.services.plans import plan_report_html, plan_start
from auction.sim.plan_changes import DEFAULT_HORIZON_S, PlanError, parse_change


class Command(BaseCommand):
    help = ("Apply changes to a clone of the live cluster (or --base NAME) in memory, run it "
            "forward beside the unchanged baseline and print the difference. Never changes "
            "the live cluster. Example: plan --change 'fail_zone zone=z2' --horizon 600")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--change", action="append", default=[], metavar="'ACTION name=value ...'",
                            help="a change (repeatable), e.g. 'scale process_guid=web instances=60 at=30'")
        parser.add_argument("--horizon", type=float, default=DEFAULT_HORIZON_S,
                            help="sim seconds to run after the base (default 600, at most 3600)")
        parser.add_argument("--base", default="live", help="live (default) or a foundation's name")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")
        parser.add_argument("--report", metavar="FILE.html", help="also write the plan's report card")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            changes = [parse_change(text) for text in options["change"]]
        except PlanError as exc:
            raise CommandError(f"--change: {exc.message}") from None
        body = {"base": options["base"], "changes": changes, "horizon_s": options["horizon"]}
        tty = sys.stderr.isatty()

        def progress(fraction: float) -> None:
            if tty:
                sys.stderr.write(f"\rrunning {fraction:4.0%}")
                sys.stderr.flush()

        try:
            plan, run = plan_start(body, source="cli", inline=True, progress=progress,
                                   report=bool(options["report"]))
        except BBSError as exc:
            raise CommandError(exc.message) from None
        if tty:
            sys.stderr.write("\r")
        if run is None or plan.result is None:
            raise CommandError(plan.error or f"plan {plan.pk} is {plan.status}")
        if options["report"]:
            html = plan_report_html(run, plan.base)
            path = Path(options["report"])
            try:
                path.write_text(html, encoding="utf-8")
            except OSError as exc:
                raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from None
        if options["json"]:
            self.stdout.write(json.dumps({"plan": {"id": plan.pk, "result": plan.result}}, indent=1))
        else:
            self.stdout.write(summary(plan.pk, plan.result))
        if options["report"]:
            self.stderr.write(f"wrote {options['report']}")


def _ttc(value: Any) -> str:
    return value if isinstance(value, str) else f"{value:g} s"


def summary(plan_id: int, result: dict[str, Any]) -> str:
    """The result for a terminal: what differs from the baseline."""
    base = result["baseline"]
    lines = [f"plan {plan_id}: {len(result['changes'])} change(s), {result['horizon_s']:g} sim-s "
             f"after {result['base_now']:g} s",
             f"time to converge: {_ttc(result['time_to_converge'])} (baseline {_ttc(base['time_to_converge'])})",
             f"auctions {result['auctions_total']}, convergence passes {len(result['passes'])}, "
             f"moved {len(result['moved'])}, stopped {len(result['stopped'])}, "
             f"unplaced {len(result['unplaced'])} (baseline {len(base['unplaced'])})"]
    apps = sorted(set(result["placed"]) | set(base["placed"]))
    changed = [g for g in apps if result["placed"].get(g) != base["placed"].get(g)]
    if changed:
        lines.append("running per zone, plan | baseline:")
        for guid in changed[:40]:
            plan_zones = ", ".join(f"{z}={n}" for z, n in result["placed"].get(guid, {}).items()) or "-"
            base_zones = ", ".join(f"{z}={n}" for z, n in base["placed"].get(guid, {}).items()) or "-"
            lines.append(f"  {guid}: {plan_zones} | {base_zones}")
        if len(changed) > 40:
            lines.append(f"  ... and {len(changed) - 40} more apps")
    lines.append("zones (free memory MB / containers, plan | baseline):")
    for zone, z in result["zones"].items():
        b = base["zones"].get(zone, {})
        lines.append(f"  {zone}: {z['memory_free_mb']} / {z['containers_free']} | "
                     f"{b.get('memory_free_mb', '-')} / {b.get('containers_free', '-')}")
    errors: dict[str, int] = {}
    for item in result["unplaced"]:
        errors[item["error"]] = errors.get(item["error"], 0) + 1
    for error, n in sorted(errors.items()):
        lines.append(f"unplaced: {n} x {error}")
    lines += [f"warning: {w}" for w in result["warnings"][:20]]
    if len(result["warnings"]) > 20:
        lines.append(f"... and {len(result['warnings']) - 20} more warnings")
    return "\n".join(lines)
