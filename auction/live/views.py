"""What each page's socket joins and how it snapshots a region (dashboard.md L1, L2).

A region is what one group's frames update; its snapshot re-renders all of it, so the
first frame on connect and the resync after a gap (L4) are the same code. Other pages
register their views and regions here: ``register_view("auctions", lambda p: [...])``
and ``register_region("auctions", render)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.template.loader import render_to_string

from auction.bbs.validation import storable_text
from auction.live import fragments
from auction.live.coalescer import SEP, events_view_register
from auction.live.groups import lrps_page_of
from auction.live.presenter import presenter_banner
from auction.selectors.clock import clock_view
from auction.selectors.feed import events_query
from auction.selectors.grid import grid_mode, grid_snapshot, zone_names, zone_tiles


@dataclass(frozen=True, slots=True)
class LiveParams:
    """The page's live query: ``/ws/live/?view=grid&mode=dense&zone=z1``."""

    view: str = "grid"
    mode: str = ""
    zone: str = ""
    # The event history's filters and page, canonical (``type=…&app=…&cell=…&page=…``).
    events: str = ""
    # The page of /lrps/ shown (dashboard.md D1).
    page: int = 1
    # A page drawn as a wall screen (a kiosk following the presenter, C6): no metrics
    # header, no feed, no controls on it, so it joins none of their groups.
    screen: bool = False
    # The plan a /plans/<id>/ page follows (plans.md 1.5).
    plan: int = 0

    @classmethod
    def parse(cls, query: dict[str, list[str]]) -> LiveParams:
        def one(name: str, size: int = 64) -> str:
            value = (query.get(name) or [""])[0][:size]
            return value if storable_text(value) else ""  # a NUL would crash PostgreSQL

        events = events_query({n: one(n, 200) for n in ("type", "app", "cell", "page")})
        page = one("page", 9)
        plan = one("plan", 12)
        return cls(view=one("view") or "grid", mode=one("mode"), zone=one("zone"), events=events,
                   page=int(page) if page.isascii() and page.isdigit() and int(page) > 0 else 1,
                   screen=one("screen") == "1",
                   plan=int(plan) if plan.isascii() and plan.isdigit() else 0)


# view -> params -> topics it joins (sync: may read the zone list).
ViewTopics = Callable[[LiveParams], list[str]]
# topic prefix -> (topic, params) -> the region's HTML, every element out of band.
Region = Callable[[str, LiveParams], str]
VIEWS: dict[str, ViewTopics] = {}
REGIONS: dict[str, Region] = {}


def register_view(view: str, topics: ViewTopics) -> None:
    VIEWS[view] = topics


def register_region(prefix: str, region: Region) -> None:
    REGIONS[prefix] = region


def topics_for(params: LiveParams) -> list[str]:
    """The view's groups, the world epoch every page follows (``services.world``) and,
    where the page has controls (not the kiosk), what their dropdowns offer."""
    extra = ["epoch"] if params.view == "kiosk" else ["epoch", "controls"]
    topics = [*extra, *VIEWS.get(params.view, VIEWS["grid"])(params)]
    if params.screen:
        topics = [t for t in topics if t not in ("controls", "metrics", "feed")]
    return topics


def region_html(topic: str, params: LiveParams) -> str:
    prefix = topic.split(".", 1)[0]
    region = REGIONS.get(prefix)
    return region(topic, params) if region is not None else ""


def grid_topics(params: LiveParams) -> list[str]:
    """zones mode joins the tiles; full and dense join only the zones they show (L2)."""
    common = ["clock", "tray", "metrics", "feed", "presenter"]
    mode = grid_mode(params.mode or None)
    if mode == "zones" and not params.zone:
        return [*common, "zones"]
    names = zone_names()
    if params.zone:
        names = [z for z in names if z == params.zone] or names
    return [*common, *(f"zone.{z}" for z in names)]


def kiosk_topics(params: LiveParams) -> list[str]:
    """A kiosk shows no metrics header and no feed (C6): it joins neither."""
    return [t for t in grid_topics(params) if t not in ("metrics", "feed")]


def lrps_topics(params: LiveParams) -> list[str]:
    """Desired vs actual joins the group of its page of LRPs (``lrps.p<n>``)."""
    return ["clock", f"lrps.p{params.page}", "metrics", "feed", "presenter"]


def events_topics(params: LiveParams) -> list[str]:
    """The history joins the group of its own filters and page (``events.<digest>``)."""
    return ["clock", "metrics", "feed", "presenter", events_view_register(params.events)]


def compare_topics(params: LiveParams) -> list[str]:
    # The panes are in-memory worlds stepped by links; only the header clock is live.
    return ["clock", "presenter"]


def _clock(topic: str, params: LiveParams) -> str:
    return fragments.clock_fragment(clock_view())


def _tray(topic: str, params: LiveParams) -> str:
    return fragments.tray_fragment()


# A region larger than this goes as its elements, one fragment each, so the consumer can
# cut it into websocket messages (the section itself is already on the page).
REGION_WHOLE_MAX = 256 * 1024


def _zone(topic: str, params: LiveParams) -> str:
    grid = grid_snapshot(zone=topic.split(".", 1)[1], tray=False)
    out = []
    for zone in grid.zones:
        whole = fragments.zone_section_fragment(zone)
        if len(whole) <= REGION_WHOLE_MAX:
            out.append(whole)
        else:
            out.append(fragments.zone_head_fragment(zone))
            out += [fragments.cell_fragment(cell) for cell in zone.cells]
    return SEP.join(out)


def _zones(topic: str, params: LiveParams) -> str:
    return render_to_string("grid/tiles.html", {"tiles": zone_tiles(), "oob": True})


def _metrics(topic: str, params: LiveParams) -> str:
    return fragments.metrics_fragment()


def _feed(topic: str, params: LiveParams) -> str:
    return fragments.feed_fragment()


def _lrps(topic: str, params: LiveParams) -> str:
    return fragments.lrps_fragments(lrps_page_of(topic))


def _events(topic: str, params: LiveParams) -> str:
    return fragments.events_history_fragment(params.events)


def _presenter(topic: str, params: LiveParams) -> str:
    return presenter_banner()


register_view("grid", grid_topics)
register_view("kiosk", kiosk_topics)
register_view("present", grid_topics)
register_view("lrps", lrps_topics)
register_view("events", events_topics)
register_view("compare", compare_topics)
register_view("otto", lambda params: ["clock", "otto", "metrics", "feed", "presenter"])
# The auction list is live (A1); a replay shows a recorded auction, which never changes.
register_view("auctions", lambda params: ["clock", "auctions", "metrics", "feed", "presenter"])
# The sign-in page (dashboard.md AD6): only the chrome every page has.
register_view("login", lambda params: ["clock", "metrics", "feed", "presenter"])
register_view("auction", lambda params: ["clock", "metrics", "feed", "presenter"])
# The foundation upload (plans.md 3.6) shows no part of the cluster itself.
register_view("foundations", lambda params: ["clock", "metrics", "feed", "presenter"])
# A plan is a prediction, not the live cluster: its page joins the plan's own group, which
# its run notifies on progress and completion (plans.md 1.5); the page then fetches itself.
register_view("plans", lambda params: ["clock", "metrics", "feed", "presenter",
                                       *([f"plan.{params.plan}"] if params.plan else [])])
register_region("plan", lambda topic, params: fragments.plan_note_fragment(topic))
register_region("auctions", lambda topic, params: fragments.auction_list_fragment())
register_region("epoch", lambda topic, params: fragments.epoch_fragment())
register_region("controls", lambda topic, params: fragments.control_choices_fragment())
register_region("clock", _clock)
register_region("tray", _tray)
register_region("zone", _zone)
register_region("zones", _zones)
register_region("presenter", _presenter)
register_region("metrics", _metrics)
register_region("feed", _feed)
register_region("lrps", _lrps)
register_region("events", _events)
register_region("otto", lambda topic, params: fragments.otto_board_fragment())
