"""One simulation core, two stores (docs/architecture.md "Two stores"): the same scenario
and seed print exactly the same cfdot-shaped lines from the memory store and from the
database store, over 600 sim-s, timed chaos included.

The database run goes through the real services and the shared driver
(``auction.services.sim.simulate_in_database``), each auction and pass at its own
instant, into the test database (SQLite or PostgreSQL, whichever the suite runs on).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auction import scenarios
from auction.services.sim import simulate_in_database
from auction.sim.cfdot import dump_lines
from auction.sim.scenario import world_from_scenario

pytestmark = pytest.mark.django_db
UNTIL = 600.0


def memory_lines(scenario: scenarios.Scenario | str, until: float = UNTIL) -> list[str]:
    world = world_from_scenario(scenario)
    world.run_until(until)
    return list(dump_lines(world.cluster_view()))


def database_lines(scenario: scenarios.Scenario | str, until: float = UNTIL) -> list[str]:
    return list(dump_lines(simulate_in_database(scenario, until)))


def first_difference(a: list[str], b: list[str]) -> str:
    for n, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"line {n}:\n memory {x[:400]}\n db     {y[:400]}"
    return f"lengths {len(a)} (memory) and {len(b)} (db)"


@pytest.mark.parametrize("name", scenarios.available())
def test_every_scenario_prints_the_same_lines_from_both_stores(name: str) -> None:
    """Every shipped scenario, 600 sim-s: cells, cell states, desired and actual LRPs,
    tasks, domains and every BBS event, line for line."""
    memory = memory_lines(name)
    database = database_lines(name)
    assert memory == database, first_difference(memory, database)
    assert any('"event":' in line for line in memory)


BASES = ("seed-example", "az-loss", "boulders-pebbles")


@st.composite
def chaos_timelines(draw: st.DrawFn) -> scenarios.Scenario:
    """A shipped scenario with a random timeline of chaos: cells and zones failing,
    draining and coming back, crashes, scaling, at random instants."""
    base = scenarios.load(draw(st.sampled_from(BASES)))
    data = base.data
    cells = [c["cell_id"] for c in data["cells"]]
    zones = list(data["zones"])
    apps = [a["process_guid"] for a in scenarios.desired_lrps(data)]
    steps = []
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(1, 5_800)) / 10
        kind = draw(st.sampled_from(["cell_fail", "cell_restore", "cell_drain", "zone_fail",
                                     "zone_restore", "crash", "scale"]))
        if kind.startswith("cell_"):
            steps.append({"at": at, "action": kind, "cell": draw(st.sampled_from(cells))})
        elif kind.startswith("zone_"):
            steps.append({"at": at, "action": kind, "zone": draw(st.sampled_from(zones))})
        elif kind == "crash":
            steps.append({"at": at, "action": "crash", "process_guid": draw(st.sampled_from(apps)),
                          "index": draw(st.integers(0, 2))})
        else:
            steps.append({"at": at, "action": "scale", "process_guid": draw(st.sampled_from(apps)),
                          "instances": draw(st.integers(0, 6))})
    seed = draw(st.integers(0, 1_000))
    return replace(base, seed=seed, data={**data, "seed": seed, "timeline": steps})


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(chaos_timelines())
def test_random_chaos_timelines_print_the_same_lines_from_both_stores(scenario) -> None:  # type: ignore[no-untyped-def]
    """Seeded random chaos over 600 sim-s: both stores, the same lines."""
    memory = memory_lines(scenario)
    database = database_lines(scenario)
    assert memory == database, first_difference(memory, database)


def test_diego_dump_prints_the_live_cluster_in_the_same_lines() -> None:
    """``manage.py diego dump`` and ``manage.py simulate --store db|memory`` print one format:
    after a run in the database, the dump of the live cluster is the run's own output."""
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("simulate", "az-loss", "--until", "120", "--store", "db", stdout=out)
    simulated = out.getvalue().splitlines()
    dumped = StringIO()
    call_command("diego", "dump", stdout=dumped)
    assert dumped.getvalue().splitlines() == simulated == memory_lines("az-loss", 120)
