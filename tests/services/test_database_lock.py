"""One auctioneer per database, whatever Redis each stack uses (auction.md 1 step 2;
auction/services/locks.py): the simulation's lock is held in the database too."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from auction.services import locks

pytestmark = pytest.mark.django_db(transaction=True)


def held_elsewhere(name: str, hold: threading.Event, release: threading.Event, got: list[bool]) -> None:
    """Another stack's process: its own connection to the same database."""
    try:
        with locks.database_lock(name) as held:
            got.append(held)
            hold.set()
            release.wait(10)
    finally:
        connections.close_all()


def test_a_lock_held_by_another_connection_is_refused_then_free() -> None:
    hold, release, got = threading.Event(), threading.Event(), []
    other = threading.Thread(target=held_elsewhere, args=("simulation", hold, release, got))
    other.start()
    try:
        assert hold.wait(10) and got == [True]
        with locks.database_lock("simulation") as held:
            assert not held
        with locks.database_lock("another-name") as held:
            assert held  # a lock is per name
    finally:
        release.set()
        other.join(10)
    with locks.database_lock("simulation") as held:
        assert held  # released with its holder


def test_the_cluster_lock_holds_across_stacks_with_their_own_redis(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two stacks share the database but not Redis: the second's Redis lock is free, and
    still it does not advance while the first holds the database's lock."""
    hold, release, got = threading.Event(), threading.Event(), []
    other = threading.Thread(target=held_elsewhere, args=("simulation", hold, release, got))
    other.start()
    try:
        assert hold.wait(10)
        with locks.cluster_lock("simulation") as held:  # this stack's Redis: nobody holds it
            assert not held
    finally:
        release.set()
        other.join(10)
    with locks.cluster_lock("simulation") as held:
        assert held
