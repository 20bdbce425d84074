"""The check mode on by default (``auction.sim.check_mode``): a conftest that imports
``check_derived`` runs its directory's tests with every kept answer proved against a fresh
one. An explicit ``DIEGO_CHECK_DERIVED`` in the environment (``0`` to time without it)
wins."""

from __future__ import annotations

import os

import pytest

from auction.sim.check_mode import CHECK_SETTING

#: Whether the environment chose the setting itself (then the tests follow it).
CHOSEN = CHECK_SETTING in os.environ


@pytest.fixture(autouse=True)
def check_derived(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CHECK_SETTING, os.environ.get(CHECK_SETTING, "1"))
