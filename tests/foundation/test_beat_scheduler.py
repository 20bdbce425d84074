"""Beat's scheduler asks the database whether the schedule changed at most every 10 s,
not at every 1 s wake-up (dashboard.md L9); an edit is still seen within that."""

from __future__ import annotations

from typing import Any

from django_celery_beat.schedulers import DatabaseScheduler

from diego_web import beat
from diego_web.beat import IdleDatabaseScheduler


def test_the_schedule_is_asked_at_most_every_change_check_s_dashboard_md_L9(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    asked: list[float] = []
    clock = {"now": 1000.0}
    monkeypatch.setattr(beat.time, "monotonic", lambda: clock["now"])
    monkeypatch.setattr(DatabaseScheduler, "schedule_changed", lambda self: asked.append(clock["now"]) or True)
    scheduler: Any = IdleDatabaseScheduler.__new__(IdleDatabaseScheduler)  # no app, no database
    assert scheduler.schedule_changed() is True  # the first wake-up asks
    for _ in range(9):
        clock["now"] += 1.0  # beat's 1 s wake-ups
        assert scheduler.schedule_changed() is False
    clock["now"] += 1.0  # 10 s since the last question
    assert scheduler.schedule_changed() is True
    assert asked == [1000.0, 1010.0]


def test_make_run_and_the_settings_use_it() -> None:
    from pathlib import Path

    from django.conf import settings

    root = Path(settings.BASE_DIR)
    assert settings.CELERY_BEAT_SCHEDULER == "diego_web.beat:IdleDatabaseScheduler"
    assert "--scheduler diego_web.beat:IdleDatabaseScheduler" in (root / "Procfile").read_text()
