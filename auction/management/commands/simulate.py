"""``manage.py simulate SCENARIO --until T --store memory|db``: run a scenario, print it.

``--store memory`` runs the scenario in the in-memory world; ``--store db`` runs it
through the database store (the real services and rules, each auction and convergence
pass at its own sim instant, synchronously) into the configured database, replacing the
live cluster, and leaves the clock paused at ``T``. Both print the same JSON Lines,
shaped like ``cfdot`` (``auction.sim.cfdot``): the same scenario and seed print the same
lines from either store.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from auction import scenarios
from auction.management.commands.diego import quiet_broken_pipe
from auction.scenarios import ScenarioError
from auction.services.sim import simulate_in_database
from auction.sim.cfdot import dump_lines
from auction.sim.scenario import world_from_scenario


class Command(BaseCommand):
    help = "Run a scenario to a sim instant in memory or through the database; print it as cfdot does."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("scenario", help=f"one of: {', '.join(scenarios.available())}")
        parser.add_argument("--until", type=float, default=600.0, help="sim seconds (default 600)")
        parser.add_argument("--store", choices=("memory", "db"), default="memory")
        parser.add_argument("--no-events", action="store_true", help="leave out the event lines")

    def handle(self, *args: Any, **o: Any) -> None:
        until = o["until"]
        if not 0 <= until <= 86_400:
            raise CommandError("--until: expected 0 to 86400 sim seconds")
        try:
            view = simulate(o["scenario"], until, o["store"])
        except ScenarioError as exc:
            raise CommandError(str(exc)) from None
        try:
            for line in dump_lines(view, events=not o["no_events"]):
                self.stdout.write(line)
            self.stdout.flush()
        except BrokenPipeError:
            quiet_broken_pipe()


def simulate(name: str, until: float, store: str) -> Any:
    """The cluster of scenario ``name`` at ``until``, from the chosen store."""
    if store == "memory":
        world = world_from_scenario(name)
        world.run_until(until)
        return world.cluster_view()

    return simulate_in_database(name, until)
