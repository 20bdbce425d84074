"""The repository's copy of the conformance cases equals the user's public cases.

The suite must not need anything outside the repository, so the cases are copied into
``tests/conformance/cases/``; when the user's folder is beside the checkout (as in CI),
the two must hold the same files with the same content, so a new or corrected public
case cannot be missed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COPY = REPO / "tests" / "conformance" / "cases"
PUBLIC = REPO.parent / "shared" / "conformance"


@pytest.mark.parametrize("kind", ["auction", "convergence"])
def test_copy_equals_public_cases(kind: str) -> None:
    if not (PUBLIC / kind).is_dir():
        pytest.skip(f"no public cases beside the repository ({PUBLIC}); the copy stands alone")
    public = {p.name: json.loads(p.read_text()) for p in (PUBLIC / kind).glob("*.json")}
    copy = {p.name: json.loads(p.read_text()) for p in (COPY / kind).glob("*.json")}
    assert sorted(copy) == sorted(public)
    for name, doc in public.items():
        assert copy[name] == doc, f"{kind}/{name} differs from the public case"
