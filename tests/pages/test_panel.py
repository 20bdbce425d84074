"""The side panel and "why here" (dashboard.md G9, G10), and the grid's hooks that open it."""

from __future__ import annotations

import pytest

from auction.models import AuctionRun
from auction.services.clock import clock_reset
from auction.services.lrps import desired_lrp_desire
from auction.services.scenarios import scenario_load
from auction.services.sim import auctioneer_run
from tests.pages.page_html import parse

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded() -> AuctionRun:
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    auctioneer_run()
    return AuctionRun.objects.get()


def facts(page) -> dict[str, str]:  # type: ignore[no-untyped-def]
    dl = page.find("dl", class_="facts")
    return dict(zip([d.text for d in dl.find_all("dt")], [d.text for d in dl.find_all("dd")], strict=True))


def panel(client, url: str, status: int = 200):  # type: ignore[no-untyped-def]
    response = client.get(url, HTTP_HX_REQUEST="true")
    assert response.status_code == status, response.content[:500]
    html = response.content.decode()
    assert "<html" not in html  # a fragment for #panel
    return parse(html)


def test_why_here_parts_sum_runners_up_and_replay_link(client, seeded: AuctionRun) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md G10 (T3 without a browser): parts sum to the total; runners-up with their
    deciding term; zone counts and the group walked first; a replay link at the item's step."""
    page = panel(client, "/panel/instance/lrp-a/1/")
    why = page.find("section", class_="why-here")
    values = {td.attrs["data-part"]: float(td.attrs["data-value"]) for td in why.find_all("td", data_part=True)}
    assert set(values) == {"resource", "starting", "locality", "bin-pack", "total"}
    total = ((values["resource"] + values["starting"]) + values["locality"]) + values["bin-pack"]
    assert abs(total - values["total"]) < 1e-6
    assert values["total"] == seeded.scores["lrp-a.1"]
    assert "walked first" in why.find("p", class_="why-zones").text
    runners = why.find("ol", class_="runners-up").find_all("li")
    assert 1 <= len(runners) <= 5
    assert all(r.find("span", class_="deciding").text for r in runners)
    step = seeded.order.index("lrp-a.1") + 1
    link = why.find("a", class_="replay-link")
    assert link.attrs["href"] == f"/auctions/{seeded.pk}/?step={step}"
    # The winner named in the panel is where the instance runs.
    assert why.find("h3").text == f"Why here: {seeded.placements['lrp-a.1']}"


def test_instance_facts_and_zone_spread(client, seeded: AuctionRun) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md G9 block: guid, index, state, presence, cell, since, crashes, placement
    error, auction, and the app's zone spread with a skew badge."""
    page = panel(client, "/panel/instance/lrp-b/0/")
    shown = facts(page)
    assert shown | {"instance": ""} == {
        "guid": "lrp-b", "instance": "", "index": "0", "state": "CLAIMED", "presence": "ORDINARY",
        "cell": seeded.placements["lrp-b.0"], "since": "0:00:00.0", "crashes": "0", "placement error": "none"}
    assert page.find("p", class_="spread").text.startswith("Zone spread of lrp-b: z1 1 · z2 1")
    assert "skew 0" in page.find("p", class_="spread").text


def test_filter_counts_expand_to_cell_ids(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md G10: filter counts per reason, expandable to cell ids (Nomad #23810)."""
    scenario_load("seed-example")
    auctioneer_run()
    desired_lrp_desire({"process_guid": "fat", "domain": "cf-apps", "instances": 1, "memory_mb": 3000})
    auctioneer_run()
    page = panel(client, "/panel/instance/fat/0/")
    reasons = page.find("ul", class_="filter-counts").find_all("li")
    assert reasons, page.text
    detail = reasons[0].find("details")
    count = int(detail.find("summary").text.rsplit(": ", 1)[1])
    cells = detail.find("span", class_="cell-ids").text.split(", ")
    assert count == len(cells) and all(c.startswith("cell-") for c in cells)


def test_unplaced_item_lists_verdicts_and_the_smallest_change(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md G9 unplaced: each cell's verdict and the smallest change that fits."""
    scenario_load("seed-example")
    auctioneer_run()
    # The seed leaves 8192-5120-... free per cell; 7000 MB fits nowhere now.
    desired_lrp_desire({"process_guid": "wide", "domain": "cf-apps", "instances": 1, "memory_mb": 7000})
    auctioneer_run()
    page = panel(client, "/panel/instance/wide/0/")
    section = page.find("section", class_="unplaced")
    assert section.find("code", class_="placement-error").text == '"insufficient resources: memory"'
    rows = {r.attrs["data-cell"]: r.text for r in section.find_all("tr", data_cell=True)}
    assert set(rows) == {"cell-1", "cell-2", "cell-3", "cell-4"}
    assert all("lacks memory" in text for text in rows.values())
    smallest = section.find("p", class_="smallest-change").text
    # The cell with the most free memory needs the least freed.
    from auction.selectors.cells import answering_cells, cell_states

    free = {s.cell_id: s.available.memory_mb for s in cell_states(answering_cells(0.0))}
    best = max(free, key=lambda c: (free[c], -int(c.split("-")[1])))
    assert smallest == f"Smallest change that fits: free {7000 - free[best]} MB memory on {best}"
    run = AuctionRun.objects.first()
    assert section.find("a", class_="replay-link").attrs["href"] == (
        f"/auctions/{run.pk}/?step={run.order.index('wide.0') + 1}")


def test_task_and_cell_panels(client, seeded: AuctionRun) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md G9: a task's state, cell and rejections; a cell's resources, tags, rootfs,
    drivers and presence."""
    task = panel(client, "/panel/task/task-c/")
    shown = facts(task)
    assert (shown["state"], shown["rejections"], shown["cell"]) == ("RUNNING", "0/3", seeded.placements["task-c"])
    assert "tasks ignore zones" in task.find("section", class_="why-here").text.lower()
    cell = facts(panel(client, "/panel/cell/cell-1/"))
    assert (cell["zone"], cell["state"], cell["presence"]) == ("z1", "healthy", "present")
    assert cell["memory"].endswith("of 8192 MB reserved, " + cell["memory"].split(", ")[1])
    assert cell["rootfs"] == "preloaded: cflinuxfs4; providers: docker"
    assert (cell["volume drivers"], cell["placement tags"]) == ("none", "none")


def test_unknown_things_are_404_fragments(client, seeded: AuctionRun) -> None:  # type: ignore[no-untyped-def]
    assert "No instance nope.3 exists now." in panel(client, "/panel/instance/nope/3/", 404).text
    assert "No cell cell-99" in panel(client, "/panel/cell/cell-99/", 404).text
    assert "No task t-x" in panel(client, "/panel/task/t-x/", 404).text
    # Opened directly (not through htmx), the panel comes inside a whole page.
    page = client.get("/panel/instance/lrp-b/0/").content.decode()
    assert "<html" in page and 'id="panel"' in page and "Why here" in page


def test_grid_elements_carry_what_the_panel_script_reads(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md G9: panel.js opens a block, tray chip or cell panel from its data attributes
    (the browser test T3 clicks them); every page has the #panel container and the script."""
    scenario_load("seed-example")
    page = parse(client.get("/grid/").content)
    assert page.find("aside", id="panel") and page.find("script", src="/static/js/panel.js")
    assert "chip" in page.find("span", data_instance="lrp-b.0").classes()  # unplaced: a tray chip
    assert "chip" in page.find("span", data_task="task-c").classes()
    auctioneer_run()
    page = parse(client.get("/grid/").content)
    assert "block" in page.find("span", data_instance="lrp-b.0").classes()
    assert "cell" in page.find("article", data_cell_id="cell-1").classes()
    for url in ("/panel/instance/lrp-b/0/", "/panel/task/task-c/", "/panel/cell/cell-1/"):
        assert client.get(url, HTTP_HX_REQUEST="true").status_code == 200


def test_cell_actions_need_an_operator_and_are_audited(client, seeded: AuctionRun) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md G9 cell (drain / fail / restore) and C2 (audited), L8 (controls need
    the control permission); CSRF is checked; refusals are messages, never a 500."""
    from django.contrib.auth.models import User
    from django.test import Client

    from auction.models import AuditEntry, Cell

    refused = client.post("/panel/cell/cell-1/drain/", HTTP_HX_REQUEST="true")
    assert refused.status_code == 403 and "control permission" in refused.content.decode()
    assert Cell.objects.get(cell_id="cell-1").state == "healthy"
    assert "Log in as an operator" in panel(client, "/panel/cell/cell-1/").text
    assert client.get("/panel/cell/cell-1/drain/").status_code == 405
    User.objects.create_superuser("op", password="pw")
    operator = Client(enforce_csrf_checks=True)
    operator.login(username="op", password="pw")
    page = parse(operator.get("/panel/cell/cell-1/", HTTP_HX_REQUEST="true").content)
    actions = page.find("div", class_="cell-actions")
    assert [b.attrs["data-action"] for b in actions.find_all("button")] == ["drain", "fail"]
    assert operator.post("/panel/cell/cell-1/drain/").status_code == 403  # no CSRF token
    import json

    token = json.loads(actions.attrs["hx-headers"])["X-CSRFToken"]
    drained = operator.post("/panel/cell/cell-1/drain/", HTTP_X_CSRFTOKEN=token, HTTP_HX_REQUEST="true")
    assert drained.status_code == 200 and "cell-1 draining (evacuation)" in parse(drained.content).text
    assert Cell.objects.get(cell_id="cell-1").state == "draining"
    entry = AuditEntry.objects.filter(action="cell_drain").get()
    assert (entry.source, entry.user.username, entry.target) == ("dashboard", "op", "cell-1")
    again = operator.post("/panel/cell/cell-1/drain/", HTTP_X_CSRFTOKEN=token, HTTP_HX_REQUEST="true")
    assert again.status_code == 400 and "only a healthy cell can drain" in again.content.decode()
    shown = [b.attrs["data-action"] for b in parse(again.content).find("div", class_="cell-actions").find_all("button")]
    assert shown == ["fail", "restore"]
    assert operator.post("/panel/cell/cell-1/explode/", HTTP_X_CSRFTOKEN=token).status_code == 404
    restored = operator.post("/panel/cell/cell-1/restore/", HTTP_X_CSRFTOKEN=token, HTTP_HX_REQUEST="true")
    assert restored.status_code == 200 and Cell.objects.get(cell_id="cell-1").state == "healthy"


@pytest.mark.parametrize("strategy", ["dea", "objective", "random"])
def test_other_strategies_show_their_own_rule(client, strategy: str) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md G10: other strategies show their rule (dea's narrowing, objective's f)."""
    from auction.engine import AuctionConfig

    scenario_load("seed-example")
    auctioneer_run(config=AuctionConfig(placement_strategy=strategy))
    run = AuctionRun.objects.get()
    why = panel(client, "/panel/instance/lrp-a/1/").find("section", class_="why-here")
    rule = why.find("p", class_="rule").text
    assert rule.startswith(f"{strategy}: ")
    if strategy == "dea":
        assert "dea's narrowing" in rule
        assert f"{run.placements['lrp-a.1']} was drawn" in why.text
    if strategy == "objective":
        assert float(why.find("span", data_part="f").attrs["data-value"]) == run.scores["lrp-a.1"]
    step = parse(client.get(f"/auctions/{run.pk}/?step={run.order.index('lrp-a.1') + 1}").content)
    assert step.find("p", class_="rule").text.startswith("Rule: ")
    assert step.find("tr", class_="winner").attrs["data-cell"] == run.placements["lrp-a.1"]


def test_oversized_app_gets_an_honest_change_and_a_crashed_instance_its_restart(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md G9: an app larger than every cell is told to add a cell, not to free
    more than a cell holds; a crashed instance shows its crashes and next restart (bbs.md 3)
    and no stale "Why here"."""
    from auction.services.cells import actual_lrp_crash

    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    auctioneer_run()
    desired_lrp_desire({"process_guid": "huge", "domain": "cf-apps", "instances": 1, "memory_mb": 20_000})
    auctioneer_run()
    section = panel(client, "/panel/instance/huge/0/").find("section", class_="unplaced")
    smallest = section.find("p", class_="smallest-change").text
    assert smallest.startswith("Smallest change that fits: add a cell of >= 20") and "cflinuxfs4" in smallest
    rows = [r.text for r in section.find_all("tr", data_cell=True)]
    assert rows and all("never fits" in text and "8192 MB in all" in text for text in rows)

    for _ in range(3):  # the 1st and 2nd crash restart at once (placed again); the 3rd waits
        actual_lrp_crash("lrp-a", 0)
        auctioneer_run()
    page = panel(client, "/panel/instance/lrp-a/0/")
    crash = page.find("section", class_="crash-history")
    assert crash is not None and "3 crashes" in crash.text and "Next restart" in crash.text
    assert len(crash.find_all("li")) == 3
    assert "Why here" not in page.text
