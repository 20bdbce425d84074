"""``manage.py diego``: an operational error is one line on stderr and a non-zero exit,
never a traceback (issue 14 point 4)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import OperationalError

from auction.management.commands import diego
from auction.services.scenarios import scenario_load

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "manage.py", "diego", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=60, env={**os.environ, **env})


def assert_one_line(done: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for word in words:
        assert word in lines[0]


def test_bad_arguments_are_one_line_and_exit_2() -> None:
    assert_one_line(run_cli("scale"), 2, "diego scale: error:", "process_guid")
    assert_one_line(run_cli("scale", "web", "many"), 2, "invalid int value: 'many'")
    assert_one_line(run_cli(), 2, "required: verb")


def test_an_unreachable_database_is_one_line_and_exit_1() -> None:
    done = run_cli("status", DATABASE_URL="postgres://nobody@127.0.0.1:1/none")
    assert_one_line(done, 1, "CommandError: the database is not answering", "DATABASE_URL")


@pytest.mark.django_db
def test_unknown_names_say_what_was_not_found() -> None:
    scenario_load("seed-example")
    with pytest.raises(CommandError) as caught:
        call_command("diego", "fail-cell", "no-such-cell")
    assert str(caught.value) == "fail-cell no-such-cell: the requested resource could not be found"
    with pytest.raises(CommandError, match=r"^scale nope: "):
        call_command("diego", "scale", "nope", "3")


@pytest.mark.django_db
def test_a_database_locked_too_long_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def locked(*args: object, **kwargs: object) -> None:
        raise OperationalError("database is locked\nwith a second line")

    monkeypatch.setattr(diego.domains, "domain_upsert", locked)
    with pytest.raises(CommandError) as caught:
        call_command("diego", "domain", "cf-apps", "120")
    assert str(caught.value) == ("the database stayed locked by another writer "
                                 "(database is locked); try again")


@pytest.mark.django_db
def test_redis_down_is_one_line(settings) -> None:  # type: ignore[no-untyped-def]
    settings.REDIS_STATE_URL = "redis://127.0.0.1:1/0"
    with pytest.raises(CommandError) as caught:
        call_command("diego", "advance")
    assert str(caught.value).startswith("Redis is not answering (")
    assert "\n" not in str(caught.value)
