"""The supervisor's back-off policy and exit wording (dashboard.md S1, S2): pure functions."""

from __future__ import annotations

import signal

from diego_web.supervise import BACKOFF_CAP, describe_exit, restart_delay


def run_quick_exits(count: int, ran_for: float = 0.5) -> list[float]:
    streak, delays = 0, []
    for _ in range(count):
        streak, delay = restart_delay(streak, ran_for)
        delays.append(delay)
    return delays


def test_quick_exits_double_from_one_second_to_the_cap() -> None:
    """dashboard.md S2: 1, 2, 4, 8, 16, then 30 s and no more."""
    assert run_quick_exits(8) == [1, 2, 4, 8, 16, 30, 30, 30]
    assert BACKOFF_CAP == 30


def test_a_long_run_starts_the_back_off_again() -> None:
    """dashboard.md S2: a process that ran 60 s or more is restarted after 1 s again."""
    streak = 0
    for _ in range(6):
        streak, _delay = restart_delay(streak, 1.0)
    assert restart_delay(streak, 59.9) == (7, 30)
    assert restart_delay(streak, 60.0) == (1, 1)
    assert restart_delay(streak, 3600.0) == (1, 1)
    # ... and the next quick exit doubles from there.
    assert restart_delay(1, 2.0) == (2, 2)


def test_exit_wording_names_the_signal_or_the_code() -> None:
    """dashboard.md S1: "worker exited (SIGKILL), restarted in 1 s"."""
    assert describe_exit(-signal.SIGKILL) == "SIGKILL"
    assert describe_exit(-signal.SIGTERM) == "SIGTERM"
    assert describe_exit(0) == "rc=0"
    assert describe_exit(3) == "rc=3"
