"""Presenter lock and kiosk tokens (dashboard.md C5, C6)."""

from __future__ import annotations

import asyncio
import time

import pytest
from django.contrib.auth.models import Permission, User

from auction.live.presenter import (
    PresenterError,
    PresenterHeld,
    current_presenter,
    presenter_publish_state,
    presenter_take,
)
from auction.live.publish import state_redis
from auction.views.kiosk import kiosk_token

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_presenter():
    state_redis().delete("live:main:presenter")
    yield
    state_redis().delete("live:main:presenter")


def _presenter(name: str) -> User:
    user = User.objects.create_user(name, password="pw")
    user.user_permissions.add(Permission.objects.get(codename="present"))
    return User.objects.get(pk=user.pk)


def test_one_presenter_per_world_and_takeover_needs_confirmation() -> None:
    """dashboard.md C5: one lock per world; taking it over asks for confirmation."""
    ann, bob = _presenter("ann"), _presenter("bob")
    presenter_take(ann)
    with pytest.raises(PresenterHeld) as held:
        presenter_take(bob)
    assert held.value.holder == "ann"
    assert current_presenter().name == "ann"
    presenter_take(bob, confirm=True)
    assert current_presenter().name == "bob"


def test_presenting_needs_the_present_permission() -> None:
    """dashboard.md C5, L8: without `present` nobody leads, over HTTP or the socket."""
    plain = User.objects.create_user("carol", password="pw")
    with pytest.raises(PresenterError):
        presenter_take(plain)
    ann = _presenter("ann")
    presenter_take(ann)
    assert not presenter_publish_state(plain, {"view": "/lrps/"})
    assert presenter_publish_state(ann, {"view": "/grid/", "query": "app=web", "sel": "web.2"})
    state = current_presenter().state
    assert state["view"] == "/grid/" and state["query"] == "app=web" and state["sel"] == "web.2"


def test_present_page(client) -> None:
    """dashboard.md C5: the page asks before taking over; the follower banner names X."""
    ann, bob = _presenter("ann"), _presenter("bob")
    client.force_login(ann)
    assert client.post("/present/", {"action": "take"}).status_code == 302
    client.force_login(bob)
    page = client.post("/present/", {"action": "take"}).content.decode()
    assert "ann is presenting. Take over?" in page and 'name="confirm" value="1"' in page
    client.force_login(User.objects.create_user("dave", password="pw"))
    assert client.get("/present/").status_code == 403
    grid = client.get("/grid/").content.decode()
    assert 'id="presenter"' in grid


def test_kiosk_needs_a_signed_read_only_token(client) -> None:
    """dashboard.md C6: a signed token; no menus; the socket view is the kiosk's."""
    assert client.get("/kiosk/").status_code == 403
    assert client.get("/kiosk/?token=" + kiosk_token() + "x").status_code == 403
    page = client.get(f"/kiosk/?mode=zones&follow=1&token={kiosk_token()}").content.decode()
    assert "<nav" not in page and 'class="kiosk"' in page
    assert "&amp;mode=zones" in page
    assert "location.reload" not in page and "http-equiv" not in page


def test_releasing_someone_elses_lock_is_an_operators_override() -> None:
    """C5 and the one operator rule (auction/permissions.py): a staff presenter without
    `control` cannot end another's presentation; an operator can."""
    from auction.live.presenter import presenter_release

    ann, bob = _presenter("ann"), _presenter("bob")
    User.objects.filter(pk=bob.pk).update(is_staff=True)
    presenter_take(ann)
    presenter_release(User.objects.get(pk=bob.pk))
    assert current_presenter().name == "ann"
    bob.user_permissions.add(Permission.objects.get(codename="control"))
    presenter_release(User.objects.get(pk=bob.pk))
    assert current_presenter() is None


def test_kiosk_link_prints_a_url_that_opens_the_kiosk(client) -> None:  # type: ignore[no-untyped-def]
    """C6: ``manage.py kiosk_link`` mints the wall screen's signed URL; a bad mode is one line."""
    from io import StringIO

    from django.core.management import CommandError, call_command

    out = StringIO()
    call_command("kiosk_link", "--base", "http://wall.test:8000", "--mode", "zones", "--no-follow",
                 stdout=out, stderr=StringIO())
    url = out.getvalue().strip()
    assert url.startswith("http://wall.test:8000/kiosk/?mode=zones&follow=0&token=")
    response = client.get(url.removeprefix("http://wall.test:8000"))
    assert response.status_code == 200 and b'class="kiosk"' in response.content
    with pytest.raises(CommandError, match="unknown mode 'tiles'"):
        call_command("kiosk_link", "--mode", "tiles", stdout=StringIO(), stderr=StringIO())


@pytest.mark.parametrize("view", [
    "//evil.example/phish", "http://evil.example/", "https://evil.example/grid/",
    "javascript:alert(1)", "/\\evil.example", "/\\/evil.example", "/grid/?x=1", "/grid/#x",
    "/admin/", "/api/v1/desired_lrps", "/controls/clock/", "/nowhere/", "/grid/\x00",
    "grid/", "", " /grid/", "/grid/\n",
])
def test_presenter_views_are_the_apps_own_pages_only(view) -> None:
    """dashboard.md C5: followers go only to same-origin paths of the app's own pages."""
    ann = _presenter("ann")
    presenter_take(ann)
    assert presenter_publish_state(ann, {"view": view})
    assert current_presenter().state["view"] == "/grid/"


@pytest.mark.parametrize("view", ["/grid/", "/lrps/", "/events/", "/auctions/", "/auctions/3/",
                                  "/auctions/3/cells/", "/compare/", "/otto/", "/"])
def test_presenter_views_of_the_app_pass(view) -> None:
    """dashboard.md C5: the dashboard's own pages are followed as reported."""
    ann = _presenter("ann")
    presenter_take(ann)
    assert presenter_publish_state(ann, {"view": view})
    assert current_presenter().state["view"] == view


def test_a_presentation_ends_when_its_presenter_has_no_page_open() -> None:
    """dashboard.md C5: no page of the presenter's says it is there for PRESENTER_AWAY_S:
    the presentation ends (followers are released by its banner); a page that says so in
    time keeps it."""
    from auction.live import presenter as p

    ann = _presenter("ann")
    taken = p.presenter_take(ann)
    now = time.time()
    assert p.current_presenter(now + p.PRESENTER_AWAY_S - 1) is not None
    p.presenter_seen(ann.pk)  # a page of hers is open
    assert p.current_presenter(time.time() + p.PRESENTER_AWAY_S - 1) is not None
    p.presenter_seen(None)  # anyone else's page says nothing for her
    assert p.current_presenter(time.time() + p.PRESENTER_AWAY_S + 1) is None
    assert p.current_presenter() is None  # ended for good, not just hidden
    assert 'id="presenter-ended"' in p.presenter_banner(None, ended=True)
    assert taken.user_id == ann.pk


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_presenters_open_socket_keeps_the_presentation() -> None:
    """dashboard.md C5: the socket of a user who may present says they are there."""
    from asgiref.sync import sync_to_async
    from channels.testing import WebsocketCommunicator

    from auction.live import presenter as p
    from diego_web.asgi import application

    ann = await sync_to_async(_presenter)("ann")
    await sync_to_async(p.presenter_take)(ann)
    await sync_to_async(p.state_redis().delete)(f"{p.key_prefix()}:presenter-seen")
    communicator = WebsocketCommunicator(application, "/ws/live/?view=grid",
                                         headers=[(b"origin", b"http://127.0.0.1:8000")])
    communicator.scope["user"] = ann
    connected, _ = await communicator.connect()
    assert connected
    await communicator.receive_from(timeout=5)
    seen = None
    for _ in range(50):
        seen = await sync_to_async(p.state_redis().get)(f"{p.key_prefix()}:presenter-seen")
        if seen:
            break
        await asyncio.sleep(0.05)
    assert seen is not None
    await communicator.disconnect()
