"""Celery beat's scheduler: django-celery-beat's, asking the database less often.

``DatabaseScheduler`` asks the database whether the periodic tasks changed at every
wake-up, once a second with the clock's 1 s tick: a connection and a query a second
for an edit made in the admin now and then. This one asks at most every
``CHANGE_CHECK_S`` seconds (dashboard.md L9); an edit takes effect within that.
"""

from __future__ import annotations

import time

from django_celery_beat.schedulers import DatabaseScheduler


class IdleDatabaseScheduler(DatabaseScheduler):  # type: ignore[misc]
    #: An edit of the periodic tasks (the admin) is seen within this many seconds.
    CHANGE_CHECK_S = 10.0
    _last_check: float | None = None

    def schedule_changed(self) -> bool:
        now = time.monotonic()
        if self._last_check is not None and now - self._last_check < self.CHANGE_CHECK_S:
            return False
        self._last_check = now
        return bool(super().schedule_changed())
