"""Compare placement strategies on a scenario in memory (dashboard.md S1/S2, auction.md 9)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from auction.engine import ObjectiveConfig
from auction.sim.compare import (
    METRIC_ROWS,
    CompareError,
    PaneSpec,
    compare,
    metric_text,
    pane_spec,
    parse_strategies,
)


class Command(BaseCommand):
    help = ("Run a scenario under 2-4 placement strategies in cloned in-memory worlds "
            "and print the auction.md 9 metrics as a table (* = best).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("scenario", nargs="?", default="cold-start")
        parser.add_argument("--strategies", default="diego,dea,objective,random",
                            help="comma-separated, 2 to 4 of diego, diego-go (diego in Go order, "
                                 "auction.md 2.1), dea, objective, random")
        parser.add_argument("--seed", type=int, default=None, help="default: the scenario's seed")
        parser.add_argument("--until", type=float, default=60.0, help="sim seconds to run (default 60)")
        parser.add_argument("--starting-container-weight", type=float, default=0.25)
        parser.add_argument("--bin-pack-first-fit-weight", type=float, default=0.0)
        default = ObjectiveConfig()
        parser.add_argument("--objective", default=default.expression, help="objective f (auction.md 8.2)")
        for name in ("alpha", "beta", "gamma", "delta"):
            parser.add_argument(f"--{name}", type=float, default=getattr(default, name))

    def specs(self, options: dict[str, Any]) -> list[PaneSpec]:
        """The panes the options ask for (``CompareError`` for an unknown strategy); the
        ``report`` command reads the same options."""
        objective = ObjectiveConfig(options["objective"], options["alpha"], options["beta"],
                                    options["gamma"], options["delta"])
        names = parse_strategies([options["strategies"]])
        return [pane_spec(n, starting_container_weight=options["starting_container_weight"],
                          bin_pack_first_fit_weight=options["bin_pack_first_fit_weight"],
                          objective=objective) for n in names]

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            specs = self.specs(options)
            result = compare(options["scenario"], specs, seed=options["seed"], until=options["until"])
        except CompareError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{result.scenario.name}, seed {result.seed}, at {result.until:g} sim s "
                          f"(* = best; auction.md 9)")
        header = ["metric"] + [p.spec.label for p in result.panes]
        rows = [header]
        for name, label in METRIC_ROWS:
            row = [label]
            for pane in result.panes:
                if pane.metrics is None:
                    row.append("-")
                    continue
                mark = " *" if name != "placed" and result.is_best(pane, name) else ""
                row.append(metric_text(pane.metrics, name) + mark)
            rows.append(row)
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        for i, row in enumerate(rows):
            self.stdout.write("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
            if i == 0:
                self.stdout.write("  ".join("-" * w for w in widths))
        for pane in result.panes:
            if pane.error:
                self.stdout.write(self.style.ERROR(f"{pane.spec.label}: {pane.error}"))
