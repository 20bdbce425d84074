"""The /plans/ page, its capacity form, the grid's zone-loss chips and the panel's
"N more of this size fit" (plans.md 1.5, 1.6, 2.1, 2.2), through the Django client."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from auction.models import AuditEntry, Plan
from auction.services.lrps import desired_lrp_desire
from auction.services.sim import simulate_in_database
from tests.pages.page_html import parse

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def placed(db: None) -> None:
    simulate_in_database("seed-example", 60.0)


@pytest.fixture
def operator_client(db: None) -> Client:
    user = User.objects.create_user("planner", password="pw-for-tests")
    user.user_permissions.add(Permission.objects.get(codename="control"))
    client = Client()
    client.force_login(user)
    return client


def test_the_page_composes_with_the_chaos_controls_choices_plans_md_1_5(placed, client) -> None:  # type: ignore[no-untyped-def]
    page = parse(client.get("/plans/").content.decode())
    assert page.find("a", aria_current="page").text == "Plans"
    kinds = [o.attrs["value"] for o in page.find("select", id="change-kind").find_all("option")]
    assert {"fail_zone", "scale", "add_cells", "auction_config", "remove_cell"} <= set(kinds)
    zones = page.find("fieldset", data_kind="fail_zone").find("select")
    assert [o.text for o in zones.find_all("option")] == ["z1", "z2"]
    assert page.find_all("a", class_="signin")  # not an operator: no Run button
    assert client.post("/plans/", {"changes": "fail_zone zone=z2"}).status_code == 403
    assert not Plan.objects.exists()


def test_run_read_the_diff_download_and_apply_plans_md_1_6(placed, operator_client) -> None:  # type: ignore[no-untyped-def]
    response = operator_client.post("/plans/", {"changes": "scale process_guid=lrp-a instances=5\n", "horizon": "300"})
    assert response.status_code == 302
    plan = Plan.objects.get()
    page = parse(operator_client.get(response["Location"]).content.decode())
    row = page.find("tr", data_app="lrp-a")
    assert "changed" in row.classes()
    assert page.find("dd", data_stopped=True).text.strip() == "0"
    report = operator_client.get(f"/plans/{plan.pk}/report/")
    assert report["Content-Disposition"] == f'attachment; filename="plan-{plan.pk}.html"'
    assert report.content.startswith(b"<!DOCTYPE html>")
    assert page.find_all("button", id="plan-apply")
    applied = operator_client.post(f"/plans/{plan.pk}/apply/")
    assert applied.status_code == 302
    assert AuditEntry.objects.filter(action="plan_apply", target=f"plan-{plan.pk}").exists()
    after = parse(operator_client.get(f"/plans/{plan.pk}/").content.decode())
    assert after.find_all("table", id="plan-beside")
    assert not after.find_all("button", id="plan-apply")
    again = operator_client.post(f"/plans/{plan.pk}/apply/")
    assert again.status_code == 400 and b"applied already" in again.content
    # Applied at the plan's base instant: nothing to say of the live cluster moving on.
    assert not after.find_all("span", class_="applied-late")


def test_an_apply_after_the_cluster_moved_on_says_so_plans_md_1_6(placed, operator_client) -> None:  # type: ignore[no-untyped-def]
    from auction.services.sim import sim_advance

    response = operator_client.post("/plans/", {"changes": "scale process_guid=lrp-a instances=5\n", "horizon": "300"})
    plan = Plan.objects.get()
    sim_advance(now=plan.base_now + 42)
    assert operator_client.post(f"/plans/{plan.pk}/apply/").status_code == 302
    page = parse(operator_client.get(response["Location"]).content.decode())
    note = page.find("span", class_="applied-late").text
    assert note.startswith("The live cluster had moved on 42 sim-s since the plan was computed"), note


def test_a_bad_change_is_said_on_the_page_plans_md_1_2(placed, operator_client) -> None:  # type: ignore[no-untyped-def]
    response = operator_client.post("/plans/", {"changes": "scale process_guid=lrp-a instances=-3"})
    assert response.status_code == 400
    error = parse(response.content.decode()).find("p", class_="plan-error").text
    assert error == "changes[0] (scale): Invalid field: instances"
    assert "instances=-3" in response.content.decode()  # the text is kept to fix
    assert not Plan.objects.exists()


def test_the_capacity_form_answers_in_place_plans_md_2_1(placed, client) -> None:  # type: ignore[no-untyped-def]
    answer = parse(client.get("/plans/capacity/?memory_mb=1024&disk_mb=512").content.decode())
    assert int(answer.find("strong", data_fits=True).text) > 0
    bad = client.get("/plans/capacity/?memory_mb=x")
    assert bad.status_code == 400 and b"Invalid field: memory_mb" in bad.content


def test_the_next_one_refused_at_commit_is_named_plans_md_2_1(placed, client) -> None:  # type: ignore[no-untyped-def]
    """plans.md 2.1, auction.md 7.3: with a proxy, a commit refuses 0 MB LRPs the scheduler
    still gives the cells; the next one's error is the empty string, named on the page."""
    from auction.models import Cell

    Cell.objects.update(proxy_memory_mb=32)
    answer = parse(client.get("/plans/capacity/?memory_mb=0&disk_mb=0").content.decode())
    assert int(answer.find("strong", data_fits=True).text) > 0
    assert answer.find("p", class_="capacity-fits").find("em").text == "refused at commit"


def test_the_grid_loads_zone_loss_chips_after_itself_plans_md_2_2(placed, client) -> None:  # type: ignore[no-untyped-def]
    grid = parse(client.get("/grid/").content.decode())
    assert grid.find(id="zone-loss").attrs["hx-get"] == "/plans/zone-loss/"
    chips = parse(client.get("/plans/zone-loss/").content.decode()).find_all("span", class_="zl-chip")
    assert [c.attrs["data-zone"] for c in chips] == ["z1", "z2"]
    # The chip says what its colour says and agrees with its tooltip ("yes" beside
    # "degraded: 2 apps" contradicted itself).
    for chip in chips:
        classes = chip.attrs["class"]
        zone, status = chip.attrs["data-zone"], (classes.split() if isinstance(classes, str) else classes)[-1]
        expected = {"zl-green": f"survives the loss of {zone}: yes", "zl-amber": f"loss of {zone}: degraded",
                    "zl-red": f"loss of {zone}: "}[status]
        assert chip.text.startswith(expected), (status, chip.text)
        assert ("degraded:" in chip.attrs["title"]) == (status == "zl-amber" and "app" in chip.text)


def test_a_zone_loss_tooltip_names_a_few_apps_plans_md_2_2() -> None:
    from django.template.loader import render_to_string

    down = [f"app-{n:02d}" for n in range(80)]
    html = render_to_string("plans/zone_loss.html", {"zones": [("z1", {
        "status": "red", "apps_down": down, "apps_degraded": [], "unplaced": 0, "survives": False})]})
    chip = parse(html).find("span", class_="zl-chip")
    assert chip.text == "loss of z1: 80 apps down"
    assert "app-00, app-01, app-02, app-03, app-04 and 75 more;" in chip.attrs["title"]
    html = render_to_string("plans/zone_loss.html", {"zones": [("z2", {
        "status": "amber", "apps_down": [], "apps_degraded": ["a", "b"], "unplaced": 2, "survives": True})]})
    assert parse(html).find("span", class_="zl-chip").text == "loss of z2: degraded, 2 apps, 2 unplaced"


def test_an_unplaced_instance_says_how_many_more_of_its_size_fit_plans_md_2_1(placed, client) -> None:  # type: ignore[no-untyped-def]
    desired_lrp_desire({"process_guid": "huge", "domain": "cf-apps", "rootfs": "preloaded:cflinuxfs4",
                        "instances": 1, "memory_mb": 7000, "disk_mb": 10})
    from auction.services.sim import auctioneer_run

    auctioneer_run()
    panel = parse(client.get("/panel/instance/huge/0/", HTTP_HX_REQUEST="true").content.decode())
    more = panel.find("p", class_="capacity-more")
    assert "memory_mb=7000" in more.attrs["hx-get"]
    fragment = parse(client.get(more.attrs["hx-get"]).content.decode())
    assert fragment.find("span", data_fits="0").text == "0 more of this size fit"


def test_a_plans_auctions_replay_step_by_step_as_live_ones_plans_md_1_7(placed, operator_client) -> None:  # type: ignore[no-untyped-def]
    from auction.models import AuctionRun, PlanAuction

    live_auctions = AuctionRun.objects.count()
    response = operator_client.post("/plans/", {"changes": "scale process_guid=lrp-a instances=5\n", "horizon": "300"})
    plan = Plan.objects.get()
    page = parse(operator_client.get(response["Location"]).content.decode())
    row = page.find("tr", data_plan_auction="1")
    link = row.find("a", class_="replay-link").attrs["href"]
    assert link == f"/plans/{plan.pk}/auctions/1/?step=0"
    assert page.find("p", class_="plan-replays-note").attrs["data-kept"] == str(PlanAuction.objects.count())
    record = PlanAuction.objects.get(plan=plan, number=1).record
    assert record["detail"] == "full" and {"lrp-a.3", "lrp-a.4"} <= set(record["order"])

    replay = parse(operator_client.get(link).content.decode())
    note = replay.find("p", class_="prediction-note")
    assert note.attrs["data-prediction"] == f"plan-{plan.pk}" and "not by the live cluster" in note.text
    assert replay.find("h1").text.startswith(f"Plan {plan.pk}: predicted auction 1 of ")
    assert replay.find("div", id="replay").attrs["data-plan-auction"] == "1"
    assert replay.find(class_="replay-state").attrs["data-stage"] == "batch"
    base = f"/plans/{plan.pk}/auctions/1/?step="
    links = {a.attrs["data-replay"]: a.attrs["hx-get"] for a in replay.find_all("a", data_replay=True)}
    last = len(record["order"]) + 1
    assert links == {"first": base + "0", "back": base + "0", "step": base + "1", "last": base + str(last)}
    for step, ident in enumerate(record["order"], start=1):
        body = parse(operator_client.get(base + str(step), HTTP_HX_REQUEST="true").content.decode())
        state = body.find(class_="replay-state")
        assert (state.attrs["data-stage"], state.attrs["data-item"]) == ("item", ident)
        winner = record["placements"].get(ident)
        if winner is None:
            assert body.find("code", class_="placement-error").attrs["data-error"] == record["failures"][ident]
            continue
        # The verdicts: every cell asked has its row, the winner marked, as on a live replay.
        assert body.find("strong", data_winner=True).attrs["data-winner"] == winner
        assert body.find("tr", class_="winner").attrs["data-cell"] == winner
        cells = {r.attrs["data-cell"] for r in body.find_all("tr", class_="cand")}
        assert cells == {c["cell_id"] for c in record["cells"]}
    commit = parse(operator_client.get(base + str(last)).content.decode())
    assert commit.find(class_="replay-state").attrs["data-stage"] == "commit"
    # A prediction is not the live cluster's: the live list and records are untouched.
    assert AuctionRun.objects.count() == live_auctions
    assert f"/plans/{plan.pk}/" not in operator_client.get("/auctions/").content.decode()
    assert operator_client.get(f"/plans/{plan.pk}/auctions/999/").status_code == 404
    api = operator_client.get(f"/api/v1/plans/{plan.pk}").json()["plan"]
    assert api["auctions"][0] == {"number": 1, "detail": "full", "replay": f"/plans/{plan.pk}/auctions/1/"}
    assert api["result"]["replays"]["kept"] == len(api["auctions"])


def test_a_big_clusters_zone_loss_is_worked_out_by_the_worker_one_at_a_time_plans_md_2_2(  # type: ignore[no-untyped-def]
        placed, client, monkeypatch, django_capture_on_commit_callbacks) -> None:
    """Over ``INLINE_ROWS`` the web process never works the answer out: it asks the Celery
    task once (single flight), says "checking" until the answer is kept in the database,
    then shows it; a changed world shows the last answer while the next is asked for."""
    from auction import tasks
    from auction.models import ZoneLossAnswer
    from auction.services import plans as service
    from auction.services.lrps import desired_lrp_update
    from auction.services.workers import ZONE_LOSS_RUN

    monkeypatch.setattr(service, "INLINE_ROWS", 0)
    asked: list[int] = []
    monkeypatch.setattr(service, "worker_send", lambda name, base: asked.append(1) if name == ZONE_LOSS_RUN else None)
    monkeypatch.setattr(service, "zone_loss", lambda *a, **k: pytest.fail("worked out in the web process"))

    def chips_page():  # type: ignore[no-untyped-def]
        with django_capture_on_commit_callbacks(execute=True):  # the task is sent after commit
            return parse(client.get("/plans/zone-loss/").content.decode())

    first = chips_page()
    assert first.find("span", class_="zone-loss").text == "checking zone loss…"
    chips_page()
    assert asked == [1]  # one computation at a time
    assert ZoneLossAnswer.objects.get(base="live").computing_since is not None

    monkeypatch.undo()  # the worker's own process: the real rules
    tasks.zone_loss_run()  # what the worker runs for the message
    kept = ZoneLossAnswer.objects.get(base="live")
    assert kept.computing_since is None and set(kept.answer["zones"]) == {"z1", "z2"}

    monkeypatch.setattr(service, "INLINE_ROWS", 0)
    monkeypatch.setattr(service, "worker_send", lambda name, base: asked.append(1) if name == ZONE_LOSS_RUN else None)
    monkeypatch.setattr(service, "zone_loss", lambda *a, **k: pytest.fail("worked out in the web process"))
    chips = chips_page().find_all("span", class_="zl-chip")
    assert [c.attrs["data-zone"] for c in chips] == ["z1", "z2"] and asked == [1]

    desired_lrp_update("lrp-a", {"instances": 4})
    stale = chips_page().find_all("span", class_="zl-chip")
    assert [c.attrs["data-zone"] for c in stale] == ["z1", "z2"]  # the last answer while the next is worked out
    assert asked == [1, 1]


def test_the_zone_loss_fingerprint_is_the_same_in_every_process_plans_md_2_2() -> None:
    """Web processes and the worker compare fingerprints: text hashed alike everywhere,
    not Python's per-process ``hash``."""
    import subprocess
    import sys

    code = ("from auction.sim.plans import zone_loss_fingerprint as f; "
            "print(f(3, [('cell-1', 'HEALTHY', 8192)], [('lrp-a', 3, 2048)]))")
    prints = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={"PYTHONHASHSEED": seed, "PATH": ""}, cwd=str(ROOT)).stdout
              for seed in ("1", "2")}
    assert len(prints) == 1 and len(prints.pop().strip()) == 64


def test_a_plans_big_auction_pages_its_cells_as_a_live_one_plans_md_1_7(placed, operator_client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md A8 on a plan's auction: the top rows, then the cells 50 a page, asked
    of the plan's own cell pages."""
    from auction.selectors import auctions as selectors

    monkeypatch.setattr(selectors, "BIG_CELLS", 2)
    monkeypatch.setattr(selectors, "PAGE_ROWS", 3)
    response = operator_client.post("/plans/", {"changes": "scale process_guid=lrp-a instances=5\n", "horizon": "300"})
    plan = Plan.objects.get()
    step = parse(operator_client.get(f"/plans/{plan.pk}/auctions/1/?step=1").content.decode())
    button = step.find("div", id="cell-pages").find("button")
    assert button.attrs["hx-get"] == f"/plans/{plan.pk}/auctions/1/cells/?step=1&page=0"
    first = parse(operator_client.get(button.attrs["hx-get"]).content.decode())
    assert len(first.find_all("tr", class_="cand")) == 3
    more = first.find("nav", class_="pager").find("button")
    assert more.attrs["hx-get"] == f"/plans/{plan.pk}/auctions/1/cells/?step=1&page=1"
    assert operator_client.get(f"/plans/{plan.pk}/auctions/1/cells/?step=0&page=0").status_code == 400
    assert response.status_code == 302


def test_a_plans_summarised_auction_says_why_it_is_a_summary_plans_md_1_7(placed, operator_client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from auction.services import plans as service

    monkeypatch.setattr(service, "PLAN_FULL_REPLAYS", 0)
    operator_client.post("/plans/", {"changes": "scale process_guid=lrp-a instances=5\n", "horizon": "300"})
    plan = Plan.objects.get()
    page = parse(operator_client.get(f"/plans/{plan.pk}/").content.decode())
    assert page.find("tr", data_plan_auction="1").find("span", class_="muted").text == "(summary)"
    step = parse(operator_client.get(f"/plans/{plan.pk}/auctions/1/?step=1").content.decode())
    notes = [p.text for p in step.find_all("p", class_="note")]
    assert any(n.startswith("Summary record (a plan keeps all the verdicts of its first 0 auctions only)") for n in notes)
    assert step.find("tr", class_="winner")  # the winner is kept in a summary
