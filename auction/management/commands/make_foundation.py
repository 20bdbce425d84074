"""Write a synthetic Diego foundation as a cfdot capture (plans.md 3.4).

    manage.py make_foundation --cells 1000 --zones 3 --apps 10000 --instances 250000 --seed 7 --dir DIR
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from auction.sim.cfdot import COMMAND_FILES
from auction.sim.foundation_gen import FoundationShape, capture_files, make_foundation


class Command(BaseCommand):
    help = "Write a realistic synthetic foundation as one cfdot JSON Lines file per command."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cells", type=int, default=1000)
        parser.add_argument("--zones", type=int, default=3)
        parser.add_argument("--apps", type=int, default=10_000)
        parser.add_argument("--instances", type=int, default=250_000)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--dir", required=True, help="where to write the files (created if missing)")

    def handle(self, *args: Any, **o: Any) -> None:
        shape = FoundationShape(cells=o["cells"], zones=o["zones"], apps=o["apps"],
                                instances=o["instances"], seed=o["seed"])
        try:
            files = capture_files(make_foundation(shape))
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        target = Path(o["dir"])
        try:
            target.mkdir(parents=True, exist_ok=True)
            for command, name in COMMAND_FILES.items():
                lines = files.get(command, [])
                (target / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"{o['dir']}: {exc.strerror}") from None
        self.stdout.write(", ".join(f"{name}: {len(files.get(c, []))}" for c, name in COMMAND_FILES.items()))
