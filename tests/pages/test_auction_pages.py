"""The auction sequence pages over recorded auctions (dashboard.md section 2, A1-A8)."""

from __future__ import annotations

import pytest

from auction.engine import AuctionConfig
from auction.models import ActualLRP, AuctionRun, Cell, Zone
from auction.selectors.auctions import explanation_summary, runners_up, walk_groups
from auction.selectors.clock import sim_now
from auction.services.cells import cell_drain, cell_fail
from auction.services.clock import clock_reset, clock_step
from auction.services.lrps import desired_lrp_desire, desired_lrp_update
from auction.services.scenarios import scenario_load
from auction.services.sim import auctioneer_run, sim_advance
from auction.services.store import KEEP_FULL_RECORDS
from auction.services.tasks import task_desire
from tests.pages.page_html import parse

pytestmark = pytest.mark.django_db

SEED_ORDER = ["lrp-b.0", "lrp-a.0", "task-c", "task-d", "lrp-b.1", "lrp-a.1", "lrp-a.2"]


def seed_run() -> AuctionRun:
    scenario_load("seed-example")
    auctioneer_run()
    return AuctionRun.objects.get()


def run_until(t: float) -> None:
    """Step the paused clock to ``t`` in 1 s steps, the auctioneer answering after each."""
    while (now := sim_now()) < t - 1e-9:
        clock_step(min(1.0, t - now))
        sim_advance()
        auctioneer_run()


def replay_page(client, run: AuctionRun, step: int | str, **headers):  # type: ignore[no-untyped-def]
    response = client.get(f"/auctions/{run.pk}/?step={step}", **headers)
    assert response.status_code == 200
    return parse(response.content)


def test_list_shows_the_newest_200_with_their_facts(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md A1: newest 200; id, world, sim time, trigger, items, placed, failed, duration."""
    from auction.selectors.clock import world_epoch

    run = seed_run()
    AuctionRun.objects.bulk_create(
        [AuctionRun(started_at=float(i), trigger="converge", items=3, placed=2, failed=1, duration_ms=1.5,
                    world_epoch=world_epoch()) for i in range(205)])
    page = parse(client.get("/auctions/").content)
    rows = page.find_all("tr", data_auction=True)
    assert len(rows) == 200
    ids = [int(r.attrs["data-auction"]) for r in rows]
    assert ids == sorted(ids, reverse=True) and ids[0] == AuctionRun.objects.order_by("-pk").first().pk
    assert run.pk not in ids  # the oldest fell off
    assert rows[0].text.split()[:9] == [f"#{ids[0]}", "this", "0:03:24.0", "converge", "diego",
                                        "3", "2", "✗", "1"]
    assert "1.5 ms" in rows[0].text
    assert page.find("a", href="/auctions/").text == "Auctions"  # the nav link


def test_strip_has_the_seed_lanes_in_engine_order(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md A2: three lanes; seed-example gives lrp-b.0 lrp-a.0 | task-c task-d | lrp-b.1 lrp-a.1 lrp-a.2."""
    run = seed_run()
    assert run.order == SEED_ORDER
    page = replay_page(client, run, 0)
    lanes = page.find_all("section", class_="lane")
    assert [lane.find("h2").text for lane in lanes] == ["1 First instances", "2 Tasks", "3 Remaining instances"]
    idents = [[a.attrs["data-ident"] for a in lane.find_all("a", data_ident=True)] for lane in lanes]
    assert idents == [["lrp-b.0", "lrp-a.0"], ["task-c", "task-d"], ["lrp-b.1", "lrp-a.1", "lrp-a.2"]]
    widths = {a.attrs["data-ident"]: a.attrs["style"] for a in page.find_all("a", data_ident=True)}
    # Width follows memory: 5120 MB is 2.5x 2048 MB.
    assert widths["lrp-b.0"] == "width: 160px" and widths["lrp-a.0"] == "width: 64px"
    captions = [a.find("small").text for a in lanes[0].find_all("a", data_ident=True)]
    assert captions == ["#1", "#1"]  # the seed's 1-based instance names (LRP-B.1, LRP-A.1)


def test_steps_batch_items_commit_and_clamping(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md A4: step 0 = batch, 1..n = the items in order, last = commit; ?step clamps."""
    run = seed_run()
    assert replay_page(client, run, 0).find(class_="replay-state").attrs["data-stage"] == "batch"
    for step, ident in enumerate(SEED_ORDER, start=1):
        state = replay_page(client, run, step).find(class_="replay-state")
        assert (state.attrs["data-stage"], state.attrs["data-item"]) == ("item", ident)
    assert replay_page(client, run, 8).find(class_="replay-state").attrs["data-stage"] == "commit"
    assert replay_page(client, run, 99).find(class_="replay-state").attrs["data-step"] == "8"
    assert replay_page(client, run, "abc").find(class_="replay-state").attrs["data-step"] == "0"
    page = replay_page(client, run, 3)
    links = {a.attrs["data-replay"]: a.attrs["hx-get"] for a in page.find_all("a", data_replay=True)}
    base = f"/auctions/{run.pk}/?step="
    assert links == {"first": base + "0", "back": base + "2", "step": base + "4", "last": base + "8"}
    for a in page.find_all("a", data_replay=True):
        assert (a.attrs["hx-target"], a.attrs["hx-push-url"]) == ("#replay", "true")
    assert page.find("button", data_replay="play") and page.find("select", data_replay="speed")
    speeds = [o.attrs["value"] for o in page.find("select", data_replay="speed").find_all("option")]
    assert speeds == ["0.5", "1", "2", "4"]
    # An htmx step request gets the replay body only, not the page around it.
    fragment = client.get(f"/auctions/{run.pk}/?step=3", HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment and 'data-item="task-c"' in fragment
    # A history restore wants the whole page.
    restore = client.get(f"/auctions/{run.pk}/?step=3", HTTP_HX_REQUEST="true",
                         HTTP_HX_HISTORY_RESTORE_REQUEST="true").content.decode()
    assert "<html" in restore


def test_unknown_auction_and_bad_pages_are_clear_errors(client) -> None:  # type: ignore[no-untyped-def]
    run = seed_run()
    missing = client.get("/auctions/999/")
    assert missing.status_code == 404 and "No auction #999" in missing.content.decode()
    swapped = client.get("/auctions/999/?step=2", HTTP_HX_REQUEST="true")  # a step of a wiped run
    assert swapped.status_code == 404 and "<html" not in swapped.content.decode()
    assert client.get(f"/auctions/{run.pk}/cells/?step=0&page=0").status_code == 400
    assert client.get(f"/auctions/{run.pk}/cells/?step=1&page=x").status_code == 400


def test_candidate_table_follows_the_zone_walk(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md A5: rows in zone-walk order, first group highlighted, the rest greyed
    "not considered" with would-be scores, the winner marked, parts and total shown."""
    run = seed_run()
    page = replay_page(client, run, 5)  # lrp-b.1: z1 holds lrp-b.0, so z2 (0) is walked first
    groups = page.find_all("tbody", class_="walk-group")
    assert [g.find("tr", class_="group-head").text for g in groups] == [
        "z2: 0 instances · walked first", "z1: 1 instance · not considered (would-be scores)"]
    assert "first-group" in groups[0].classes() and "not-considered" in groups[1].classes()
    first = [r.attrs["data-cell"] for r in groups[0].find_all("tr", class_="cand")]
    rest = [r.attrs["data-cell"] for r in groups[1].find_all("tr", class_="cand")]
    assert first == ["cell-3", "cell-4"] and rest == ["cell-1", "cell-2"]
    winner = page.find("tr", class_="winner")
    assert winner.attrs["data-cell"] == run.placements["lrp-b.1"] and "★" in winner.text
    for row in page.find_all("tr", class_="cand"):
        filters = {td.attrs["data-filter"]: td.text for td in row.find_all("td", data_filter=True)}
        assert filters == {"rootfs": "✓ pass", "volume-drivers": "✓ pass", "placement-tags": "✓ pass"}
        if row.attrs["data-outcome"] == "unfit":  # task-c and lrp-b.0 took the memory
            assert row.find("td", class_="capacity").text == "✗ lacks memory"
            continue
        parts = {td.attrs["data-part"]: float(td.attrs["data-value"]) for td in row.find_all("td", data_part=True)}
        assert set(parts) == {"resource", "starting", "locality", "bin_pack", "total"}
        total = ((parts["resource"] + parts["starting"]) + parts["locality"]) + parts["bin_pack"]
        assert total == pytest.approx(parts["total"], abs=1e-9)
    # The zone never walked still shows its would-be scores.
    cell2 = groups[1].find("tr", data_cell="cell-2")
    assert "unreached" in cell2.classes() and cell2.find("td", data_part="total").attrs["data-value"]
    assert cell2.find("td").text == "z1 (1)"


def test_task_steps_say_tasks_ignore_zones(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md A6: a task step says "tasks ignore zones"."""
    run = seed_run()
    page = replay_page(client, run, 3)
    assert "tasks ignore zones" in page.find(class_="step-view").text
    assert page.find("tr", class_="group-head").text.startswith("all zones: tasks ignore zones")


def test_cap_blocked_and_failed_steps_show_exact_errors(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md A6: the cap error; a failure's exact string and who lacks each dimension."""
    scenario_load("seed-example")
    auctioneer_run(config=AuctionConfig(starting_container_count_maximum=2))
    run = AuctionRun.objects.get()
    page = replay_page(client, run, 3)
    assert page.find("code", class_="placement-error").attrs["data-error"] == (
        "waiting to start instance: reached in-flight start limit")
    assert "in-flight start cap was reached" in page.find(class_="step-view").text
    desired_lrp_desire({"process_guid": "huge", "domain": "cf-apps", "instances": 1, "memory_mb": 100_000})
    auctioneer_run()
    run = AuctionRun.objects.first()
    step = run.order.index("huge.0") + 1
    page = replay_page(client, run, step)
    assert page.find("code", class_="placement-error").attrs["data-error"] == "insufficient resources: memory"
    lacking = page.find(class_="lacking").text
    assert "memory: cell-1, cell-2, cell-3, cell-4" in lacking
    assert {r.find("td", class_="capacity").text for r in page.find_all("tr", class_="cand")} == {"✗ lacks memory"}


def test_badges_carried_orphaned_and_evacuated(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md A3: "↻n" with the previous error, "from cell-x", "evac"; the legend's note."""
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    auctioneer_run()
    desired_lrp_desire({"process_guid": "huge", "domain": "cf-apps", "instances": 1, "memory_mb": 100_000})
    auctioneer_run()
    desired_lrp_update("lrp-a", {"instances": 4})
    auctioneer_run()
    run = AuctionRun.objects.first()
    page = replay_page(client, run, 0)
    badge = page.find("a", data_ident="huge.0").find("span", class_="qi-badge")
    assert badge.text == "↻1" and badge.attrs["title"] == 'carried over; previous error: "insufficient resources: memory"'
    step = replay_page(client, run, run.order.index("huge.0") + 1)
    assert '↻1: carried over from 1 earlier auction; previous error: "insufficient resources: memory"' in [
        p.text for p in step.find_all("p", class_="step-note")]
    legend = page.find(id="replay-legend").text
    assert "documented behaviour" in legend and "convergence" in legend

    run_until(10)
    victim = run.placements["lrp-a.3"]
    orphans = {f"{a.desired_id}.{a.index}" for a in ActualLRP.objects.filter(cell_id=victim, state="RUNNING")}
    assert orphans
    cell_fail(victim)
    run_until(31)  # presence lapses in 10-15 s; the pass at 30 s makes SUSPECT + replacements
    for ident in orphans:
        replacement = AuctionRun.objects.filter(batch__has_key=ident).order_by("-pk").first()
        page = replay_page(client, replacement, 0)
        texts = [b.text for b in page.find("a", data_ident=ident).find_all("span", class_="qi-badge")]
        assert f"from {victim}" in texts, (ident, texts)

    healthy = ActualLRP.objects.filter(state="RUNNING").exclude(cell_id=victim).first().cell_id
    cell_drain(healthy)
    auctioneer_run()
    evac = AuctionRun.objects.first()
    assert any(m.get("evac") for m in evac.batch.values())
    page = replay_page(client, evac, 0)
    assert "evac" in [b.text for b in page.find_all("span", class_="qi-badge")]


def test_commit_step_names_each_cells_answer(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md A7: accepted; rejected (empty error, carried over); timed out (placed)."""
    run = seed_run()
    page = replay_page(client, run, 8)
    rows = {r.attrs["data-cell"]: r.attrs["data-verdict"] for r in page.find_all("tr", data_verdict=True)}
    assert rows == dict.fromkeys(sorted(set(run.placements.values())), "accepted")
    # A recorded rejection and an unanswered commit render as the record says.
    run.commit = {"cell-1": {"accepted": ["lrp-b.0"], "rejected": ["lrp-a.1"]}, "cell-2": "unreachable"}
    run.placements = {"lrp-b.0": "cell-1", "task-c": "cell-2"}
    run.save()
    page = replay_page(client, run, 8)
    cells = {r.attrs["data-cell"]: r.text for r in page.find_all("tr", data_verdict=True)}
    assert 'rejected 1 (empty error "", carried over)' in cells["cell-1"] and "lrp-a.1" in cells["cell-1"]
    assert "timed out: counted as placed; the cell may still run it; convergence decides" in cells["cell-2"]
    assert "task-c" in cells["cell-2"]


def _big_cluster(cells: int) -> None:
    zones = [Zone.objects.create(name=f"z{i}") for i in (1, 2)]
    Cell.objects.bulk_create([Cell(cell_id=f"cell-{i:03d}", zone=zones[i % 2], index=i // 2) for i in range(cells)])


def test_big_auction_shows_top_rows_reason_counts_and_pages(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md A8: over 200 cells, the top 10 and reason counts, plus 50-row hx-get pages."""
    _big_cluster(230)
    Cell.objects.filter(cell_id__in=[f"cell-{i:03d}" for i in range(20)]).update(placement_tags=["gpu"])
    from auction.services.domains import domain_upsert

    domain_upsert("cf-apps", 0)
    desired_lrp_desire({"process_guid": "web", "domain": "cf-apps", "instances": 1, "memory_mb": 256})
    auctioneer_run()
    run = AuctionRun.objects.get()
    assert run.detail == "full" and len(run.explanations[0]["cells"]) == 230
    page = replay_page(client, run, 1)
    top = page.find("table", class_="candidates").find_all("tr", class_="cand")
    assert len(top) == 10 and "winner" in top[0].classes()
    assert page.find("li", data_reason="placement tags").text == "placement tags: 20"
    button = page.find(id="cell-pages").find("button")
    assert button.attrs["hx-get"] == f"/auctions/{run.pk}/cells/?step=1&page=0"
    first = parse(client.get(button.attrs["hx-get"]).content)
    assert len(first.find_all("tr", class_="cand")) == 50
    nxt = first.find("nav", class_="pager").find("button")
    assert nxt.attrs["hx-get"].endswith("page=1") and nxt.attrs["hx-target"] == "#cell-pages"
    last = parse(client.get(f"/auctions/{run.pk}/cells/?step=1&page=4").content)
    assert len(last.find_all("tr", class_="cand")) == 30 and "next 50" not in last.text


def test_big_batches_get_a_minimap_and_a_bounded_strip(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md A8: over 200 items, a minimap; the strip shows a window around the step."""
    scenario_load("seed-example")
    desired_lrp_desire({"process_guid": "many", "domain": "cf-apps", "instances": 230, "memory_mb": 16,
                        "disk_mb": 16})
    auctioneer_run()
    run = AuctionRun.objects.get()
    assert run.items == 237
    page = replay_page(client, run, 120)
    minimap = page.find_all("a", class_="mm")
    assert 100 <= len(minimap) <= 200
    assert sum(1 for m in minimap if "mm-current" in m.classes()) == 1
    strip = page.find_all("a", data_ident=True)
    assert len(strip) <= 51 and any("is-current" in a.classes() for a in strip)


def test_older_auctions_keep_winner_runners_up_and_reason_counts(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md 2: the newest 20 keep full records; older ones a summary per item."""
    scenario_load("seed-example")
    auctioneer_run()
    for n in range(1, KEEP_FULL_RECORDS + 2):
        task_desire({"task_guid": f"t-{n}", "domain": "cf-tasks", "memory_mb": 64, "disk_mb": 64})
        auctioneer_run()
    runs = list(AuctionRun.objects.order_by("-pk"))
    assert [r.detail for r in runs[:KEEP_FULL_RECORDS]] == ["full"] * KEEP_FULL_RECORDS
    assert {r.detail for r in runs[KEEP_FULL_RECORDS:]} == {"summary"}
    oldest = runs[-1]
    assert oldest.order == SEED_ORDER
    for note in oldest.explanations:
        assert note["trimmed"] and len(note["cells"]) <= 1 + 5 and note["cell_count"] == 4
        assert note["winner"] in {c["cell_id"] for c in note["cells"]}
    page = replay_page(client, oldest, 5)
    assert "Summary record" in page.find(class_="step-view").text
    assert page.find("tr", class_="winner").attrs["data-cell"] == oldest.placements["lrp-b.1"]


def test_summary_and_runners_up_are_pure_reshapes() -> None:
    """dashboard.md G10: runners-up ranked by score with their deciding term; summaries idempotent."""
    note = {
        "identifier": "web.1", "kind": "lrp", "strategy": "diego", "winner": "c2",
        "zone_counts": {"z1": 0, "z2": 1}, "zone_groups": [{"count": 0, "zones": ["z1"]}],
        "chosen_zones": ["z1"],
        "cells": [
            {"cell_id": "c1", "zone": "z1", "outcome": "scored", "resource": 0.5, "starting": 0.25,
             "locality": 0.0, "bin_pack": 0.0, "score": 0.75, "reached": True},
            {"cell_id": "c2", "zone": "z1", "outcome": "scored", "resource": 0.5, "starting": 0.0,
             "locality": 0.0, "bin_pack": 0.0, "score": 0.5, "reached": True},
            {"cell_id": "c3", "zone": "z2", "outcome": "scored", "resource": 0.1, "starting": 0.0,
             "locality": 0.0, "bin_pack": 0.0, "score": 0.1, "reached": False},
            {"cell_id": "c4", "zone": "z2", "outcome": "filtered", "filter": "rootfs"},
            {"cell_id": "c5", "zone": "z1", "outcome": "unfit", "problems": ["disk", "memory"]},
        ],
    }
    ranked = runners_up(note)
    assert [r["cell_id"] for r in ranked] == ["c3", "c1"]
    assert ranked[0]["deciding"] == "zone walk: z2 has 1 instance, z1 walked first"
    assert ranked[1]["deciding"] == "lost by 0.25: starting"
    assert [g["label"] for g in walk_groups(note)] == ["z1: 0 instances", "z2: 1 instance"]
    summary = explanation_summary(note)
    assert summary["reason_counts"] == {"rootfs": 1, "insufficient disk, memory": 1}
    assert [c["cell_id"] for c in summary["cells"]] == ["c1", "c2", "c3"]
    assert explanation_summary(summary) == summary


def test_commit_rejection_from_proxy_overhead(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md A7 + auction.md 7: 300 MB free, proxy 32, LRPs 256 and 10 both win; at
    commit the 10 MB one is rejected with the empty error and carried over."""
    from auction.services.domains import domain_upsert

    zone = Zone.objects.create(name="z1")
    Cell.objects.create(cell_id="cell-1", zone=zone, memory_mb=300, disk_mb=1000, containers=10, proxy_memory_mb=32)
    domain_upsert("cf-apps", 0)
    for guid, memory in (("big", 256), ("small", 10)):
        desired_lrp_desire({"process_guid": guid, "domain": "cf-apps", "instances": 1, "memory_mb": memory,
                            "disk_mb": 10})
    auctioneer_run()
    run = AuctionRun.objects.get()
    assert run.failures == {"small.0": ""}
    page = replay_page(client, run, len(run.order) + 1)
    row = page.find("tr", data_cell="cell-1")
    assert row.attrs["data-verdict"] == "rejected"
    assert 'rejected 1 (empty error "", carried over)' in row.text and "rejected: small.0" in row.text
    step = replay_page(client, run, run.order.index("small.0") + 1)
    assert step.find("code", class_="placement-error").attrs["data-error"] == ""
    assert "rejected by the cell at commit" in step.find(class_="step-view").text
    assert step.find("tr", class_="winner").attrs["data-cell"] == "cell-1"  # the tentative win


def test_auction_without_a_decision_record_still_replays(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md 2/A8: an auction too big to keep verdicts replays its order and outcomes."""
    run = seed_run()
    run.explanations, run.detail = None, "none"
    run.save()
    page = replay_page(client, run, 0)
    assert "too big to keep" in page.find(class_="step-view").text
    lanes = [[a.attrs["data-ident"] for a in lane.find_all("a", data_ident=True)]
             for lane in page.find_all("section", class_="lane")]
    assert lanes == [["lrp-b.0", "lrp-a.0"], ["task-c", "task-d"], ["lrp-b.1", "lrp-a.1", "lrp-a.2"]]
    step = replay_page(client, run, 1)
    assert "No decision record" in step.find(class_="step-view").text
    assert step.find("strong", data_winner=True).text == run.placements["lrp-b.0"]
