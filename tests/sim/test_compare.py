"""Strategy comparison (dashboard.md S1/S2, auction.md 9): panes, metrics, the page, the command."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from auction.engine import ObjectiveConfig, zone_skew
from auction.sim.bench import main as bench_main
from auction.sim.compare import CompareError, PaneSpec, compare, parse_strategies
from auction.sim.quality import batch_zone_skew, run_metrics
from auction.sim.scenario import world_from_scenario

ALL = ["diego", "dea", "objective", "random"]


def test_panes_share_seed_workload_and_clock() -> None:
    """dashboard.md S1: 2-4 cloned worlds on one seed, workload, chaos stream and clock."""
    result = compare("az-loss", [PaneSpec(s) for s in ALL], until=400)
    worlds = [p.world for p in result.panes]
    assert all(w is not None for w in worlds)
    assert {w.now for w in worlds} == {400}
    assert {w.seed for w in worlds} == {3}
    assert {frozenset(w.apps) for w in worlds} == {frozenset(worlds[0].apps)}
    # The chaos stream reached every pane: z3 failed and came back in each.
    for world in worlds:
        steps = [e.key for e in world.log if e.type == "scenario_step"]
        assert any("zone_fail" in s for s in steps) and any("zone_restore" in s for s in steps)
    assert [w.config.placement_strategy for w in worlds] == ALL


def test_cold_start_equal_counts_random_spreads_worse_than_diego() -> None:
    """dashboard.md T16 in memory: equal counts; random's distribution score > diego's."""
    result = compare("cold-start", [PaneSpec(s) for s in ALL], until=60)
    by = {p.spec.strategy: p.metrics for p in result.panes}
    assert {m.placed for m in by.values()} == {200}
    assert by["random"].distribution_final > by["diego"].distribution_final
    assert result.is_best(result.panes[0], "distribution_final")
    assert not result.is_best(result.panes[3], "distribution_final")


def test_metrics_follow_auction_md_9() -> None:
    """auction.md 9: communications (dea: one advert per cell + one start per placement)."""
    result = compare("cold-start", [PaneSpec("diego"), PaneSpec("dea")], until=10)
    diego, dea = (p.metrics for p in result.panes)
    assert diego.communications == 20 + 20  # 20 cells asked, 20 commits
    assert dea.communications == 20 + 200
    assert diego.attempts["mean"] == 1.0 and diego.failures == 0


def test_carried_work_counts_attempts_and_wait() -> None:
    """auction.md 9: attempts > 1 and waits > 0 once the in-flight cap carries work over."""
    world = world_from_scenario("inflight-cap")
    world.run_until(400)
    metrics = run_metrics(world)
    assert metrics.placed == 10 and metrics.attempts["max"] > 1 and metrics.wait["max"] > 0
    assert metrics.failures_by_error == {
        "waiting to start instance: reached in-flight start limit": metrics.failures}


def test_batch_zone_skew_matches_the_engine_for_the_batch_apps() -> None:
    """auction.md 9 zone skew: the per-auction figure equals the engine's for the batch's apps."""
    world = world_from_scenario("az-loss")
    world.run_until(1)
    from auction.engine import LRPWork, schedule

    states = world.cell_states()
    work = [LRPWork("web-01", 3, 512, 1024), LRPWork("web-02", 3, 512, 1024)]
    result = schedule(states, work)
    full = zone_skew(states, result)
    mine = batch_zone_skew(states, result)
    assert mine.per_app == {g: full.per_app[g] for g in ("web-01", "web-02")}


def test_objective_errors_are_shown_per_pane() -> None:
    """dashboard.md S1: a bad objective shows `invalid objective: <reason>`; others still run."""
    bad = PaneSpec("objective", objective=ObjectiveConfig(expression="1 + ("))
    result = compare("cold-start", [PaneSpec("diego"), bad], until=5)
    assert result.panes[0].metrics is not None
    assert result.panes[1].error.startswith("invalid objective: ")
    weights = PaneSpec("objective", objective=ObjectiveConfig(alpha=0.5))
    assert compare("cold-start", [PaneSpec("diego"), weights], until=1).panes[1].error == (
        "invalid objective: alpha + beta + gamma + delta must be 1")


def test_strategy_set_is_checked() -> None:
    """dashboard.md S1: 2-4 known strategies."""
    assert parse_strategies(["diego,dea", "random"]) == ["diego", "dea", "random"]
    with pytest.raises(CompareError, match="choose 2 to 4"):
        parse_strategies(["diego"])
    with pytest.raises(CompareError, match="unknown strategy 'best'"):
        parse_strategies(["diego,best"])
    with pytest.raises(CompareError, match="unknown scenario"):
        compare("nope", [PaneSpec("diego"), PaneSpec("dea")])


@pytest.mark.django_db
def test_compare_page_keeps_the_strategy_set_in_the_url(client: Client) -> None:
    """dashboard.md S1/S2, U1: the URL holds the strategies; each pane has grid, tray, metrics."""
    response = client.get("/compare/?strategies=diego&strategies=random&scenario=boulders-pebbles&t=30")
    assert response.status_code == 200
    html = response.content.decode()
    assert re.findall(r'data-strategy="(\w+)"', html) == ["diego", "random"]
    assert html.count('class="dense"') == 2
    assert "insufficient resources: memory" in html  # red.1 in each tray
    assert 'aria-label="best"' in html
    assert "strategies=diego%2Crandom" in html  # step links keep the set
    checked = re.findall(r'name="strategies" value="(\w+)" checked', html)
    assert checked == ["diego", "random"]


@pytest.mark.django_db
def test_compare_page_objective_error_and_bad_input(client: Client) -> None:
    """dashboard.md S1: objective errors in place; bad input is a clear 400, never a 500."""
    html = client.get("/compare/?strategies=objective,diego&objective.f=1%2B").content.decode()
    assert "invalid objective: unexpected end of expression at position 3" in html
    for query in ("strategies=diego", "scenario=nope", "t=abc", "seed=x", "seed=%C2%B2", "diego.scw=-1&strategies=diego,dea"):
        response = client.get(f"/compare/?{query}")
        assert response.status_code in (200, 400), query
        assert 'class="cmp-error' in response.content.decode(), query


@pytest.mark.django_db
def test_compare_command_prints_the_metrics_table() -> None:
    """dashboard.md S2 via manage.py compare: the same metrics as a table, best marked."""
    out = StringIO()
    call_command("compare", "cold-start", "--strategies", "diego,random", stdout=out)
    text = out.getvalue()
    assert "distribution score" in text and "communications" in text
    diego_row = next(line for line in text.splitlines() if line.startswith("distribution score"))
    assert "0.000 → 0.000 *" in diego_row
    with pytest.raises(CommandError, match="choose 2 to 4"):
        call_command("compare", "--strategies", "diego")


def test_bench_prints_figures(capsys: pytest.CaptureFixture[str]) -> None:
    """The benchmark prints sim-seconds per wall-second (figures, no timed assertion)."""
    bench_main(["--cells", "30", "--sim-seconds", "60"])
    out = capsys.readouterr().out
    assert "sim-s per wall-s" in out and re.search(r"^\s+30\s+\d+", out, re.M)


@pytest.mark.django_db
def test_the_same_comparison_is_computed_once_per_process(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    """dashboard.md S3: one computation per question; other inputs are their own question."""
    from auction.views import compare as view

    calls: list[str] = []
    real = view.compare

    def counted(name, specs, **kw):  # type: ignore[no-untyped-def]
        calls.append(name)
        return real(name, specs, **kw)

    monkeypatch.setattr(view, "compare", counted)
    monkeypatch.setattr(view, "_COMPARED", type(view._COMPARED)())
    url = "/compare/?strategies=diego,random&scenario=boulders-pebbles&t=30"
    first, second = client.get(url), client.get(url)
    assert first.status_code == second.status_code == 200 and len(calls) == 1
    assert first.content.count(b'data-strategy="') == second.content.count(b'data-strategy="') == 2
    assert client.get(url.replace("t=30", "t=40")).status_code == 200 and len(calls) == 2


def test_batch_zone_skew_by_index_or_by_walk_matches_the_engine_auction_md_9() -> None:
    """auction.md 9 zone skew: a batch of a few apps (counted from the store's index) and
    one of many (a walk of every cell's counts) both equal the engine's figure."""
    from auction.engine import LRPWork, schedule
    from auction.sim.bench import build
    from auction.sim.quality import HOLDERS_UP_TO

    world = build(30, seed=4, per_cell=8)
    world.run_until(30)
    states = world.cell_states()
    for apps in (3, HOLDERS_UP_TO + 5):
        guids = sorted(world.apps)[:apps]
        result = schedule(states, [LRPWork(g, 50, 128, 1024) for g in guids])
        full = zone_skew(states, result)
        for holders in (world.rows.holders, None):
            mine = batch_zone_skew(states, result, holders)
            assert mine.per_app == {g: full.per_app[g] for g in guids}, (apps, holders)


@pytest.mark.django_db
def test_the_untouched_form_runs_as_it_was_drawn(client: Client) -> None:
    """dashboard.md S1: the form draws the objective's weights exactly, so pressing Run
    on it sends weights that add up to 1 (0.333333 three times did not: the pane then
    answered "must be 1")."""
    import re
    from urllib.parse import urlencode

    page = client.get("/compare/?strategies=objective,diego&scenario=boulders-pebbles&t=30").content.decode()
    weights = dict(re.findall(r'name="objective\.(alpha|beta|gamma|delta)" size="5" value="([^"]+)"', page))
    assert set(weights) == {"alpha", "beta", "gamma", "delta"}
    query = urlencode({"strategies": "objective,diego", "scenario": "boulders-pebbles", "t": "30",
                       **{f"objective.{k}": v for k, v in weights.items()}})
    again = client.get(f"/compare/?{query}")
    assert again.status_code == 200 and "must be 1" not in again.content.decode()


@pytest.mark.django_db
def test_five_ticked_strategies_are_refused_and_stay_ticked(client: Client) -> None:
    """dashboard.md S1: the refusal keeps the five boxes ticked, so one can be unticked."""
    import re

    query = "&".join(f"strategies={s}" for s in ("diego", "dea", "objective", "random", "diego-go"))
    page = client.get(f"/compare/?{query}&scenario=boulders-pebbles&t=30")
    assert page.status_code == 400
    html = page.content.decode()
    assert "choose 2 to 4 strategies, got 5" in html
    assert len(re.findall(r'name="strategies" value="[^"]+" checked', html)) == 5


def test_a_report_column_with_no_figures_says_why() -> None:
    """plans.md 4: a pane that did not run shows its reason above its dashes."""
    from auction.report import comparison_report
    from auction.sim.compare import pane_spec

    bad = ObjectiveConfig(alpha=0.5, beta=0.5, gamma=0.5, delta=0.0)
    html = comparison_report("boulders-pebbles", [pane_spec("diego"), pane_spec("objective", objective=bad)],
                             until=10.0)
    assert "invalid objective: alpha + beta + gamma + delta must be 1</span></th>" in html
