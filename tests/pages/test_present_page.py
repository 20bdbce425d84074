"""The presenter's page and the pages' presenting hooks (dashboard.md C5, C6, M2), and the
API reference page (dashboard.md 10: `/api/v1/docs/`)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from auction.live.publish import state_redis
from auction.services.clock import clock_reset
from auction.services.scenarios import scenario_load
from auction.services.sim import auctioneer_run
from auction.views.kiosk import kiosk_token
from auction.views.present import back_to

pytestmark = pytest.mark.django_db


@pytest.fixture
def presenter(client: Client) -> Client:
    state_redis().delete("live:main:presenter")
    user = User.objects.create_user("ann", password="pw")
    user.user_permissions.add(Permission.objects.get(codename="present"))
    client.force_login(user)
    yield client
    state_redis().delete("live:main:presenter")


def test_take_over_returns_only_to_the_apps_own_pages() -> None:
    """C5: "Take over" from any page comes back to that page; never an open redirect."""
    assert back_to("/lrps/?page=2") == "/lrps/?page=2"
    assert back_to("/auctions/3/?step=4&sel=cell%3Acell-1") == "/auctions/3/?step=4&sel=cell%3Acell-1"
    for bad in ("", "//evil.example/x", "https://evil.example/", "/admin/", "/api/v1/cells",
                "javascript:alert(1)", "/\\evil", "/nowhere/"):
        assert back_to(bad) == "/present/", bad


def test_present_mints_a_kiosk_link_with_its_qr_code(presenter: Client) -> None:
    """C6: the link on this host, follow=1, a valid token, and an inline SVG QR code."""
    from auction.views.kiosk import kiosk_token_valid

    page = presenter.post("/present/", {"action": "kiosk"}).content.decode()
    link = re.search(r'id="kiosk-url" readonly value="([^"]+)"', page).group(1).replace("&amp;", "&")
    assert link.startswith("http://testserver/kiosk/?follow=1&token=")
    assert kiosk_token_valid(link.split("token=", 1)[1].replace("%3A", ":"))
    assert re.search(r'<figure class="kiosk-qr"><svg[^>]*>', page) and "<path" in page
    assert "<script" not in page.split('class="kiosk-qr"', 1)[1].split("</figure>", 1)[0]


def test_presenter_pages_publish_and_a_token_draws_a_wall_screen(presenter: Client) -> None:
    """C5: the presenter's own pages (not only /present/) say so; C6: a page opened with a
    valid token has no menus, controls, metrics or feed, and its socket asks for none."""
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    auctioneer_run()
    assert 'data-presenter-page="1"' not in presenter.get("/lrps/").content.decode()
    presenter.post("/present/", {"action": "take"})
    assert 'data-presenter-page="1"' in presenter.get("/lrps/").content.decode()
    assert 'data-can-present="1"' in presenter.get("/events/").content.decode()

    wall = Client().get(f"/lrps/?token={kiosk_token()}&follow=1").content.decode()
    assert 'class="kiosk kiosk-mode"' in wall and "screen=1" in wall
    assert 'aria-label="Views"' not in wall and 'id="controls"' not in wall
    assert 'id="metrics"' not in wall and 'id="feed-drawer"' not in wall
    forged = Client().get("/lrps/?token=forged").content.decode()
    assert "kiosk-mode" not in forged and 'aria-label="Views"' in forged


def test_wall_screen_socket_joins_no_chrome_groups() -> None:
    """C6 / L2: a screen's socket joins neither the metrics, the feed nor the controls."""
    from auction.live.views import LiveParams, topics_for

    plain = topics_for(LiveParams.parse({"view": ["lrps"]}))
    screen = topics_for(LiveParams.parse({"view": ["lrps"], "screen": ["1"]}))
    assert {"metrics", "feed", "controls"} <= set(plain)
    assert not {"metrics", "feed", "controls"} & set(screen) and "presenter" in screen


def test_feed_rows_name_the_panel_they_open(client: Client) -> None:
    """M2: a row opens the side panel: an instance, a task or a cell (data-open)."""
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    auctioneer_run()
    page = client.get("/grid/").content.decode()
    opens = set(re.findall(r'data-open="([^"]+)"', page))
    assert "instance:lrp-a.0" in opens
    assert any(o.startswith("task:") for o in opens)
    assert all(re.fullmatch(r"(instance|task|cell):[\w.-]+", o) for o in opens)


def test_api_reference_page_lists_every_operation_without_external_fetches(client: Client) -> None:
    """The API reference at /api/v1/docs/ is drawn from the OpenAPI document: every
    operation with its summary, every schema; nothing loaded from another origin."""
    from auction.api.openapi import HTTP_METHODS, document

    page = client.get("/api/v1/docs/").content.decode()
    doc = document()
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method in HTTP_METHODS:
                assert f'id="op-{op["operationId"]}"' in page, (method, path)
                assert op["summary"].replace("'", "&#x27;").replace('"', "&quot;") in page
    for name in doc["components"]["schemas"]:
        assert f'id="schema-{name}"' in page
    assert not re.search(r'(src|href)="(https?:)?//', page)
    assert 'href="/api/v1/docs/"' in client.get("/grid/").content.decode()


def test_back_off_chip_counts_down_to_the_restart(client: Client) -> None:
    """G6 / bbs.md 3: a crashed instance's tray chip reads "✗ lrp-a.0" (glyph apart) and
    counts down to its restart once the back-off applies (the 3rd crash waits 30 s)."""
    from auction.services.cells import actual_lrp_crash

    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    auctioneer_run()
    for _ in range(3):
        actual_lrp_crash("lrp-a", 0)
        auctioneer_run()
    page = client.get("/grid/").content.decode()
    chip = re.search(r'<span class="chip lrp st-crashed"[^>]*data-instance="lrp-a.0".*?</span></span>', page, re.S)
    assert chip is not None, page[page.find('id="tray"'):][:2000]
    text = re.sub(r"<[^>]+>", "", chip.group(0))
    assert re.search(r"\S lrp-a\.0 restart in 30 s, next pass", text), text
    assert 'data-template="restart in {s}, next pass"' in chip.group(0)


def test_history_is_in_sim_time_order(client: Client) -> None:
    """M2: /events/ lists by sim time, newest first, even when rows were stored out of order."""
    from auction.models import BBSEvent

    BBSEvent.objects.create(at=20.0, type="convergence_pass", key="", data={})
    BBSEvent.objects.create(at=10.0, type="convergence_pass", key="", data={})
    BBSEvent.objects.create(at=30.0, type="convergence_pass", key="", data={})
    page = client.get("/events/").content.decode()
    times = re.findall(r"<td>(0:00:[0-9.]+)</td><td>convergence_pass", page)
    assert times == ["0:00:30.0", "0:00:20.0", "0:00:10.0"], times
