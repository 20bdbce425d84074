"""Write the report card of a strategy comparison (plans.md 4): one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from auction.management.commands.compare import Command as CompareCommand
from auction.report import comparison_report
from auction.sim.compare import CompareError


class Command(CompareCommand):
    help = ("Run a scenario under 2-4 placement strategies (as `compare` does) and write the "
            "report card, a self-contained HTML file (plans.md 4).")

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)  # the comparison's own arguments, the same defaults
        parser.add_argument("-o", "--output", default="report.html",
                            help="the HTML file to write (default report.html; - for stdout)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            html = comparison_report(options["scenario"], self.specs(options), seed=options["seed"],
                                     until=options["until"])
        except CompareError as exc:
            raise CommandError(str(exc)) from None
        if options["output"] == "-":
            self.stdout.write(html, ending="")
            return
        path = Path(options["output"])
        try:
            path.write_text(html, encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from None
        self.stdout.write(f"wrote {path} ({len(html.encode('utf-8'))} bytes)")
