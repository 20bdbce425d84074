"""The presenter (dashboard.md C5): one per world, and the state followers mirror.

The lock is a Redis key per world naming the holder; holding it needs the ``present``
permission, and taking it from someone else needs an explicit confirmation. Releasing
someone else's lock is an operator's override (``auction.permissions.is_operator``). The
presenter's page reports its view, query (filters, mode, zone), selection and step
over its socket; the state goes out to ``w.<world>.presenter`` as one fragment, so it
rides the coalescer like every other frame (within 1 s: a 250 ms tick plus a 250 ms
merge). Clock, speed and scenario are shared server state already: their own frames
reach followers.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import redis
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.template.loader import render_to_string
from django.urls import Resolver404, resolve
from django.utils.crypto import salted_hmac

from auction.bbs.validation import storable_text
from auction.live.coalescer import numbered_frames, register_tick_check
from auction.live.groups import group
from auction.live.publish import key_prefix, publish_html, state_redis
from auction.permissions import is_operator
from auction.selectors.clock import world_epoch

log = logging.getLogger(__name__)

PERMISSION = "auction.present"
FIELDS = ("view", "query", "sel", "step", "scroll")


# The pages a follower may be sent to (dashboard.md C5): the app's own, by route name.
FOLLOWABLE = frozenset({"home", "grid", "lrps", "events", "auctions", "auction-replay",
                        "auction-cells", "compare", "otto"})
DEFAULT_VIEW = "/grid/"


def followable_view(view: str) -> str:
    """``view`` when it is a same-origin relative path to one of the app's own pages,
    else the grid: followers ``location.assign`` it, so ``//evil.example/phish``,
    ``http://…``, ``javascript:…`` or ``/\\evil`` must never reach them."""
    if (not view.startswith("/") or view.startswith("//") or "\\" in view
            or not view.isprintable() or not storable_text(view)):
        return DEFAULT_VIEW
    parts = urlsplit(view)
    if parts.scheme or parts.netloc or parts.query or parts.fragment:
        return DEFAULT_VIEW
    try:
        match = resolve(parts.path)
    except Resolver404:
        return DEFAULT_VIEW
    return view if match.url_name in FOLLOWABLE else DEFAULT_VIEW


class PresenterError(Exception):
    pass


class PresenterHeld(PresenterError):
    """Someone else presents; taking over needs a confirmation."""

    def __init__(self, holder: str) -> None:
        super().__init__(f"{holder} is presenting; confirm to take over")
        self.holder = holder


def user_tag(user_id: int | None) -> str:
    """An opaque stand-in for a user id, for pages everyone sees: a page knows it is the
    presenter's own when its tag matches, and a follower learns no account number (AD8)."""
    if user_id is None:
        return ""

    return salted_hmac("diego-web.presenter-tag", str(user_id)).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Presenter:
    user_id: int
    name: str
    since: float
    state: dict[str, str]

    @property
    def tag(self) -> str:
        return user_tag(self.user_id)


def _key() -> str:
    return f"{key_prefix()}:presenter"


#: A presentation ends when its presenter has had no page of the app open this long
#: (C5): a presenter who closed the browser no longer pulls every visitor to their last
#: page minutes later. The presenter's open pages say they are there every
#: ``PRESENTER_SEEN_EVERY_S`` (``presenter_seen``, from their sockets).
PRESENTER_AWAY_S = 60.0
PRESENTER_SEEN_EVERY_S = 15.0


def _seen_key() -> str:
    return f"{key_prefix()}:presenter-seen"


def _held() -> Presenter | None:
    raw = state_redis().get(_key())
    if raw is None:
        return None
    data = json.loads(raw)
    return Presenter(data["user_id"], data["name"], data["since"], data.get("state", {}))


def current_presenter(now: float | None = None) -> Presenter | None:
    """The presenter, or None; a presentation whose presenter is away ends here."""
    held = _held()
    if held is None:
        return None
    seen = state_redis().get(_seen_key())
    last = max(held.since, float(seen) if seen else 0.0)
    if (time.time() if now is None else now) - last <= PRESENTER_AWAY_S:
        return held
    _end_away(held)
    return None


def _end_away(held: Presenter) -> None:
    client = state_redis()
    # Only the presentation that was found away: a new one taken meanwhile stays.
    with client.pipeline(transaction=True) as pipe:
        pipe.watch(_key())
        raw = pipe.get(_key())
        if raw is None or json.loads(raw).get("since") != held.since:
            return
        pipe.multi()
        pipe.delete(_key(), _seen_key())
        try:
            pipe.execute()
        except redis.WatchError:
            return
    log.info("presenter: %s has had no page open for %.0f s; the presentation ended", held.name,
             PRESENTER_AWAY_S)
    publish_html(group("presenter"), presenter_banner(None, ended=True))


def presenter_seen(user_id: int | None) -> None:
    """The presenter's page is open (its socket says so every PRESENTER_SEEN_EVERY_S)."""
    held = _held()
    if held is not None and user_id is not None and held.user_id == user_id:
        state_redis().set(_seen_key(), repr(time.time()), ex=int(PRESENTER_AWAY_S * 2))


def _can_present(user: Any) -> bool:
    return bool(user is not None and user.is_authenticated and user.has_perm(PERMISSION))


def presenter_take(user: Any, *, confirm: bool = False) -> Presenter:
    if not _can_present(user):
        raise PresenterError("presenting needs the present permission")
    held = current_presenter()
    if held is not None and held.user_id != user.pk and not confirm:
        raise PresenterHeld(held.name)
    presenter = Presenter(user.pk, user.get_username(), time.time(),
                          held.state if held is not None else {})
    _store(presenter)
    return presenter


def presenter_release(user: Any) -> None:
    held = current_presenter()
    if held is not None and (held.user_id == user.pk or is_operator(user)):
        state_redis().delete(_key())
        publish_html(group("presenter"), presenter_banner())


def presenter_publish_state(user: Any, state: dict[str, Any]) -> bool:
    """The presenter's page reports what it shows; anyone else is ignored (L8)."""
    held = current_presenter()
    if held is None or not _can_present(user) or held.user_id != user.pk:
        return False
    clean = {k: str(state.get(k, ""))[:500] for k in FIELDS}
    clean["view"] = followable_view(clean["view"])
    _store(Presenter(held.user_id, held.name, held.since, clean))
    return True


def _store(presenter: Presenter) -> None:
    client = state_redis()
    client.set(_key(), json.dumps({
        "user_id": presenter.user_id, "name": presenter.name, "since": presenter.since,
        "state": presenter.state,
    }))
    client.set(_seen_key(), repr(time.time()), ex=int(PRESENTER_AWAY_S * 2))
    _send_now(presenter_banner(presenter))


def _send_now(banner: str) -> None:
    """The presenter's move goes to followers at once, not at the coalescer's next tick
    (C5: within 1 s, and a page change costs the follower a page load on top). Numbered
    from the group's own counter like a tick's frames (L4): a follower that sees them out
    of order re-snapshots the banner, never shows an older one. Through the tick as every
    other change when the channel layer cannot take it."""
    try:
        layer = get_channel_layer()
        for topic, message in numbered_frames(state_redis(), "presenter", banner, world_epoch()):
            async_to_sync(layer.group_send)(group(topic), message)
    except Exception:  # noqa: BLE001 - the tick delivers it instead, a little later
        log.warning("presenter: direct send failed; the next tick sends the banner", exc_info=True)
        publish_html(group("presenter"), banner)


def presenter_banner(presenter: Presenter | None = None, *, ended: bool = False) -> str:
    presenter = presenter or (None if ended else current_presenter())
    return render_to_string("partials/presenter.html", {"presenter": presenter, "oob": True,
                                                         "ended": ended})


register_tick_check(current_presenter)
