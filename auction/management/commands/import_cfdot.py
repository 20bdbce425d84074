"""Import a cfdot capture: replace the live cluster with it, or keep it named (plans.md 3).

    manage.py import_cfdot cells.jsonl cell-states.jsonl actual-lrps.jsonl ... [--as NAME]
    manage.py import_cfdot PATH... --as NAME --replace   # the next version of NAME
    manage.py import_cfdot --load NAME      # a named foundation into the live cluster
    manage.py import_cfdot --delete NAME
    manage.py import_cfdot --list
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from auction.services.foundations import (
    CaptureError,
    FoundationError,
    FoundationNotFound,
    ImportResult,
    age_text,
    foundation_delete,
    foundation_import,
    foundation_list,
    foundation_load_named,
    size_text,
)


class Command(BaseCommand):
    help = "Import the files of a cfdot capture (.jsonl or .gz, any order) into the live cluster."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="*", metavar="PATH")
        parser.add_argument("--as", dest="as_name", metavar="NAME",
                            help="keep it as the named foundation NAME; the live cluster is untouched")
        parser.add_argument("--replace", action="store_true",
                            help="with --as: take the place of the foundation NAME (its next version)")
        parser.add_argument("--load", metavar="NAME", help="load the named foundation NAME into the live cluster")
        parser.add_argument("--delete", metavar="NAME", help="delete the named foundation NAME")
        parser.add_argument("--list", action="store_true", help="list the named foundations")

    def handle(self, *args: Any, **o: Any) -> None:
        try:
            if o["list"]:
                for f in foundation_list():
                    s = f["summary"]
                    captured = (f"captured {f['captured_at']} ({age_text(f['age_s'])} ago)"
                                if f["captured_at"] else "capture time unknown")
                    self.stdout.write(f"{f['name']:24s} {f['version']}, {size_text(f['size_bytes'])}: "
                                      f"{s.get('cells', 0)} cells, {s.get('actual_lrps', 0)} actual LRPs, "
                                      f"{s.get('tasks', 0)} tasks; {captured}")
                return
            if o["delete"]:
                label = foundation_delete(o["delete"])
                self.stdout.write(self.style.SUCCESS(f"deleted foundation {o['delete']} ({label})"))
                return
            if o["load"]:
                self._report(foundation_load_named(o["load"]), f"loaded foundation {o['load']} into the live cluster")
                return
            if not o["paths"]:
                raise CommandError("give the files of a capture (or --load NAME, --list)")
            with ExitStack() as stack:
                files = []
                for path in o["paths"]:
                    try:
                        files.append((Path(path).name, stack.enter_context(open(path, "rb"))))
                    except OSError as exc:
                        raise CommandError(f"{path}: {exc.strerror}") from None
                if o["replace"] and not o["as_name"]:
                    raise CommandError("--replace replaces a named foundation: give --as NAME")
                result = foundation_import(files, as_name=o["as_name"], replace=o["replace"])
        except (CaptureError, FoundationError, FoundationNotFound) as exc:
            raise CommandError(exc.message) from None
        except DatabaseError as exc:
            # The transaction rolled back: nothing changed (plans.md 3.1).
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CommandError(f"the database refused the import, nothing changed ({text})") from None
        where = (f"{'replaced' if result.replaced else 'kept as'} foundation {result.name} "
                 f"({result.version})" if result.name else "loaded into the live cluster")
        self._report(result, where)

    def _report(self, result: ImportResult, where: str) -> None:
        s = result.summary
        self.stdout.write(self.style.SUCCESS(
            f"{where}: {s['cells']} cells in {s['zones']} zones, {s['desired_lrps']} desired LRPs, "
            f"{s['actual_lrps']} actual LRPs, {s['tasks']} tasks, {s['domains']} domains"))
        for assumption in result.assumptions:
            self.stdout.write(f"assumed: {assumption}")
        for warning in result.warnings:
            self.stdout.write(self.style.WARNING(warning))

