"""``/api/v1/foundations`` (plans.md 3.6): multipart upload, errors in the BBS shape, 413."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client, override_settings

from auction.models import ApiToken, Cell
from auction.services.scenarios import scenario_load

pytestmark = pytest.mark.django_db
CAPTURES = Path(__file__).parent / "captures"


@pytest.fixture
def auth() -> dict[str, str]:
    user = User.objects.create_user("op", password="pw")
    user.user_permissions.add(Permission.objects.get(codename="control"))
    return {"Authorization": f"Bearer {ApiToken.issue(user, 'tests')[1]}"}


def upload(client: Client, auth: dict[str, str], name: str | None = None, **files: bytes) -> tuple[int, dict]:
    from django.core.files.uploadedfile import SimpleUploadedFile

    data: dict[str, object] = {"file": [SimpleUploadedFile(n, c) for n, c in files.items()]}
    if name:
        data["name"] = name
    response = client.post("/api/v1/foundations", data, headers=auth)
    return response.status_code, response.json()


def capture() -> dict[str, bytes]:
    return {p.name.replace(".", "_"): p.read_bytes() for p in CAPTURES.glob("*.jsonl")}


def test_upload_into_live_and_as_a_name_plans_md_3_6(client: Client, auth: dict[str, str]) -> None:
    scenario_load("seed-example")
    status, body = upload(client, auth, name="eu-1", **capture())
    assert status == 201 and body["name"] == "eu-1" and body["summary"]["cells"] == 3
    assert Cell.objects.filter(cell_id="old-rep-cell").count() == 0  # kept, live untouched
    listed = client.get("/api/v1/foundations").json()["foundations"]
    assert [f["name"] for f in listed] == ["eu-1"] and listed[0]["summary"]["actual_lrps"] == 7
    status, body = upload(client, auth, **capture())
    assert status == 201 and body["name"] is None and any("old-rep-cell" in a for a in body["assumptions"])
    assert set(Cell.objects.values_list("cell_id", flat=True)) >= {"old-rep-cell"}


def test_refusals_plans_md_3_6(client: Client, auth: dict[str, str]) -> None:
    scenario_load("seed-example")
    cells = set(Cell.objects.values_list("cell_id", flat=True))
    status, body = upload(client, auth, **{"actual.jsonl": b'{"process_guid":"x","index":0,'
                                                           b'"state":"RUNNING","presence":"SUSPICIOUS"}\n'})
    assert (status, body) == (400, {"error": {"type": "InvalidRequest",
                                              "message": 'actual.jsonl:1: presence: unknown value "SUSPICIOUS"'}})
    assert upload(client, {}, **capture())[0] == 401
    with override_settings(DIEGO_UPLOAD_MAX_MB=0.001):
        status, body = upload(client, auth, **capture())
    assert status == 413 and body["error"]["message"].startswith("capture too large")
    assert set(Cell.objects.values_list("cell_id", flat=True)) == cells


def test_a_json_upload_plans_md_3_6(client: Client, auth: dict[str, str]) -> None:
    scenario_load("seed-example")
    files = [{"name": p.name, "content": p.read_text()} for p in sorted(CAPTURES.glob("*.jsonl"))]
    response = client.post("/api/v1/foundations", {"name": "as-json", "files": files},
                           content_type="application/json", headers=auth)
    assert response.status_code == 201 and response.json()["summary"]["tasks"] == 4
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=100):
        response = client.post("/api/v1/foundations", {"files": files}, content_type="application/json",
                               headers=auth)
    assert response.status_code == 413 and "multipart/form-data" in response.json()["error"]["message"]
    response = client.post("/api/v1/foundations", {"files": [{"name": "x"}]}, content_type="application/json",
                           headers=auth)
    assert response.status_code == 400 and response.json()["error"]["message"] == "Invalid field: files"


def test_a_gzip_bomb_is_refused_at_the_upload_limit_plans_md_3_1(client: Client, auth: dict[str, str]) -> None:
    """A small gzip that inflates past ``DIEGO_UPLOAD_MAX_MB`` (issue 32) is refused with its
    place, quickly and without holding what it inflates to; nothing changes."""
    import time
    import zlib

    scenario_load("seed-example")
    cells = set(Cell.objects.values_list("cell_id", flat=True))
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = b"".join(packer.compress(b'"cf-apps"\n' * 2**17) for _ in range(8)) + packer.flush()
    assert len(bomb) < 100_000
    started = time.monotonic()
    with override_settings(DIEGO_UPLOAD_MAX_MB=4):
        status, body = upload(client, auth, **{"domains.gz": bomb})
    assert time.monotonic() - started < 30
    assert status == 400
    assert body["error"]["message"].startswith("domains.gz:")
    assert "the capture passes 4 MiB (decompressed), the most one import may hold" in body["error"]["message"]
    assert set(Cell.objects.values_list("cell_id", flat=True)) == cells
