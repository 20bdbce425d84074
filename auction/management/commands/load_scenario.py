"""Load a named scenario into the live cluster (replacing what is there)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from auction import scenarios
from auction.scenarios import ScenarioError
from auction.services.scenarios import cluster_is_empty, scenario_load, scenario_reset


class Command(BaseCommand):
    help = "Load a named scenario (see --list). Replaces the current cluster."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", nargs="?", help="scenario name, e.g. seed-example")
        parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
        parser.add_argument("--reset", action="store_true",
                            help="reset to the checkpoint: load the last loaded scenario again")
        parser.add_argument(
            "--if-empty", action="store_true",
            help="only load when the cluster has no cells, LRPs or tasks",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["reset"]:
            try:
                scenario = scenario_reset()
            except ScenarioError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(self.style.SUCCESS(f"reset to the checkpoint of {scenario.name}"))
            return
        if options["list"] or not options["name"]:
            for name in scenarios.available():
                scenario = scenarios.load(name)
                self.stdout.write(f"{name:20s} {scenario.title}")
            return
        if options["if_empty"] and not cluster_is_empty():
            self.stdout.write("cluster not empty; scenario not loaded")
            return
        try:
            scenario = scenario_load(options["name"])
        except ScenarioError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(self.style.SUCCESS(f"loaded scenario {scenario.name}: {scenario.title}"))
