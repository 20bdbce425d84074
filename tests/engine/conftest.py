"""Engine tests: pure Python, no Django, no Redis.

- Make this folder's helper modules (``engine_oracle``, ``engine_gen``,
  ``engine_builders``) importable without a ``tests/__init__.py``.
- Override the root conftest's autouse ``_in_process_backends`` (Django settings, Celery,
  a private Redis) with a no-op here: nothing under ``tests/engine`` touches them, and the
  engine's tests must also run with ``-p no:django``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture(scope="session", autouse=True)
def _in_process_backends() -> Iterator[None]:
    yield
