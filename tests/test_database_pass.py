"""The PostgreSQL pass runs exactly the tests that can reach a database (dashboard.md 11)."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.test import SimpleTestCase, TestCase

from tests.conftest import _touches_database


@dataclass
class Item:
    marks: tuple[str, ...] = ()
    fixturenames: list[str] = field(default_factory=list)
    cls: type | None = None

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.marks else None


def test_only_tests_that_can_reach_a_database_run_twice() -> None:
    assert _touches_database(Item(marks=("django_db",)))  # type: ignore[arg-type]
    assert _touches_database(Item(fixturenames=["client", "transactional_db"]))  # type: ignore[arg-type]
    assert _touches_database(Item(marks=("browser",)))  # type: ignore[arg-type]
    assert _touches_database(Item(marks=("processes",)))  # type: ignore[arg-type]
    assert _touches_database(Item(cls=TestCase))  # type: ignore[arg-type]
    assert not _touches_database(Item(cls=SimpleTestCase))  # type: ignore[arg-type]
    assert not _touches_database(Item(fixturenames=["tmp_path", "settings"]))  # type: ignore[arg-type]
