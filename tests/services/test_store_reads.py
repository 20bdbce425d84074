"""bbs.md 2.1: the database store reads every field of an ActualLRP row as it was written;
``ports`` (read as its JSON text, decoded only when not empty) included."""

from __future__ import annotations

import pytest

from auction.models import ActualLRP
from auction.selectors.bbs import bbs_snapshot
from auction.services.scenarios import scenario_load

pytestmark = pytest.mark.django_db


def test_ports_of_running_and_unclaimed_rows_read_back_exactly() -> None:
    scenario_load("seed-example")
    rows = list(ActualLRP.objects.order_by("desired_id", "index")[:2])
    rows[0].ports = [{"container_port": 8080, "host_port": 61002}, {"container_port": 2222, "host_port": 61003}]
    rows[1].ports = []
    for row in rows:
        row.save(update_fields=["ports"])
    read = {(r.process_guid, r.index): r.ports for r in bbs_snapshot(0.0).snapshot.actual}
    assert read[(rows[0].desired_id, rows[0].index)] == ((8080, 61002), (2222, 61003))
    assert read[(rows[1].desired_id, rows[1].index)] == ()
