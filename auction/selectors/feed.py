"""The event feed (dashboard.md M2) and the /events/ history, read from the bounded log.

BBS events (bbs.md 8) and the simulator's own (auction, convergence, chaos, operator
controls) share one table; the feed folds bursts of one type into a single row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode

from django.core.paginator import Page, Paginator
from django.db.models import Q, QuerySet

from auction.models import BBSEvent
from auction.sim.clock import format_sim_time

FEED_ROWS = 200
PAGE_SIZE = 50
CHAOS = ("cell_fail", "cell_restore", "cell_drain", "zone_fail", "zone_restore", "actual_lrp_crash")
FAMILIES = ("desired_lrp", "actual_lrp", "task", "auction", "convergence", "chaos", "control")


def family(type_: str, data: dict[str, Any]) -> str:
    if type_ in CHAOS:
        return "chaos"
    if "source" in data:
        return "control"
    for name in ("desired_lrp", "actual_lrp", "task", "auction", "convergence"):
        if type_.startswith(name):
            return name
    return "other"


def app_of(key: str, data: dict[str, Any]) -> str:
    if (data.get("summary") or {}).get("process_guid"):
        return str(data["summary"]["process_guid"])  # a mass change's summary (bbs.md 8.1)
    for half in (data.get("after") or {}, data.get("before") or {}):
        if half.get("process_guid"):
            return str(half["process_guid"])
    return key.rsplit(".", 1)[0] if "." in key else ""


def summary(type_: str, key: str, cell_id: str, data: dict[str, Any]) -> str:
    if data.get("summary") and data.get("message"):
        return str(data["message"])  # a mass change's summary (bbs.md 8.1)
    before, after = data.get("before") or {}, data.get("after") or {}
    if before and after and before.get("state") != after.get("state"):
        where = f" on {after['cell_id']}" if after.get("cell_id") else ""
        return f"{key} {before.get('state')} → {after.get('state')}{where}"
    if after or before:
        row = after or before
        bits = [key, row.get("state", ""), row.get("presence", "") if row.get("presence") != "ORDINARY" else ""]
        if row.get("cell_id"):
            bits.append(f"on {row['cell_id']}")
        return " ".join(b for b in bits if b)
    changes = ", ".join(
        (f"{k} {_short(v[1])}" if v[0] is None else f"{k} {_short(v[0])} → {_short(v[1])}")
        for k, v in (data.get("diff") or {}).items()
        if isinstance(v, list) and len(v) == 2 and v[0] != v[1] and k not in ("process_guid", "task_guid"))
    plain = ", ".join(f"{k} {_words(v)}" for k, v in data.items()
                      if k not in ("source", "user", "diff") and v not in ("", None, 0, {}, []))
    extra = ", ".join(b for b in (changes, plain) if b)
    # The feed and the history are public streams, rendered once for every reader of a
    # live group, signed in or not: they never name the operator (dashboard.md AD8).
    who = " by an operator" if data.get("user") else ""
    src = f" ({data['source']}{who})" if data.get("source") else ""
    return " ".join(b for b in (key, extra) if b) + src


def _short(value: Any) -> str:
    """A value as a person reads it: never Python's spelling (``True``, ``['a', 'b']``)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict) and set(value) == {"epoch", "index"}:
        return f"#{value['index']}"  # a modification tag
    if isinstance(value, (list, tuple)):
        return ", ".join(_short(v) for v in value) or "none"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _words(value: Any) -> str:
    """A plain member: a [before, after] pair reads "before → after"."""
    if isinstance(value, list) and len(value) == 2 and not any(isinstance(v, (list, dict)) for v in value):
        return f"{_short(value[0])} → {_short(value[1])}"
    return _short(value)


@dataclass(slots=True)
class FeedRow:
    id: int
    at: float
    type: str
    family: str
    key: str
    app: str
    cell_id: str
    text: str
    similar: int = 0
    apps: set[str] = field(default_factory=set)
    cells: set[str] = field(default_factory=set)

    @property
    def when(self) -> str:
        return format_sim_time(self.at)

    @property
    def apps_attr(self) -> str:
        return " ".join(sorted(self.apps))

    @property
    def cells_attr(self) -> str:
        return " ".join(sorted(self.cells))

    # What the row's side panel shows (dashboard.md M2: a row opens the panel): the
    # instance of an actual LRP event (its key is ``guid.index``), the task of a task
    # event, else the cell the event happened on.
    @property
    def instance(self) -> str:
        guid, dot, index = self.key.rpartition(".")
        return self.key if self.type.startswith("actual_lrp") and guid and dot and index.isdigit() else ""

    @property
    def task(self) -> str:
        return self.key if self.type.startswith("task") and self.key else ""


def _row(values: dict[str, Any]) -> FeedRow:
    return _row_of(_row_fields(values))


RowFields = tuple[int, float, str, str, str, str, str, str]


def _row_fields(values: dict[str, Any]) -> RowFields:
    data = values["data"] or {}
    app = app_of(values["key"], data)
    cell = values["cell_id"] or (data.get("after") or {}).get("cell_id", "") or ""
    return (values["id"], values["at"], values["type"], family(values["type"], data),
            values["key"], app, cell, summary(values["type"], values["key"], cell, data))


def _row_of(fields: RowFields) -> FeedRow:
    app, cell = fields[5], fields[6]
    return FeedRow(*fields, apps={app} - {""}, cells={cell} - {""})


# What each event shows, by id. A committed event never changes and its id is never
# reused (AUTOINCREMENT, sequences), so each live tick reads the newest ids (with ``at``,
# ``type`` and ``key``, to notice a database that was flushed and numbered again) and
# decodes only the events it has not seen: it used to decode up to 800 events' JSON to
# show the same rows. Tests that roll back forget it (``feed_fields_forget``).
_FIELDS_KEPT: dict[int, RowFields] = {}
FIELDS_KEPT = 5000


def feed_fields_forget() -> None:
    _FIELDS_KEPT.clear()


def _fields_of(batch: list[tuple[int, float, str, str]]) -> list[RowFields]:
    missing = [i for i, at, type_, key in batch if (kept := _FIELDS_KEPT.get(i)) is None
               or kept[1] != at or kept[2] != type_ or kept[4] != key]
    if missing:
        if len(_FIELDS_KEPT) + len(missing) > FIELDS_KEPT:
            _FIELDS_KEPT.clear()
        for values in BBSEvent.objects.filter(id__in=missing).values("id", "at", "type", "key", "cell_id", "data"):
            _FIELDS_KEPT[values["id"]] = _row_fields(values)
    # An event deleted between the two reads (trimmed, a world reset) is left out.
    return [kept for i, *_ in batch if (kept := _FIELDS_KEPT.get(i)) is not None]


def _filtered(qs: QuerySet[BBSEvent], type_: str = "", app: str = "", cell: str = "") -> QuerySet[BBSEvent]:
    if type_:
        qs = qs.filter(type__startswith=type_) if type_ not in ("chaos", "control") else (
            qs.filter(type__in=CHAOS) if type_ == "chaos" else qs.filter(data__has_key="source").exclude(type__in=CHAOS))
    if app:
        qs = qs.filter(Q(key=app) | Q(key__startswith=f"{app}."))
    if cell:
        qs = qs.filter(cell_id=cell)
    return qs


def feed_rows(limit: int = FEED_ROWS, *, type_: str = "", app: str = "", cell: str = "") -> list[FeedRow]:
    """Newest first, at most ``limit`` rows after folding runs of one type ("+37 similar")."""
    qs = _filtered(BBSEvent.objects.order_by("-id"), type_, app, cell)
    rows: list[FeedRow] = []
    # Folding shrinks the page, so read in chunks until there are enough rows.
    offset, chunk = 0, limit * 4
    while len(rows) < limit:
        batch = list(qs.values_list("id", "at", "type", "key")[offset:offset + chunk])
        if not batch:
            break
        for fields in _fields_of(batch):
            row = _row_of(fields)
            if rows and rows[-1].type == row.type:
                rows[-1].similar += 1
                rows[-1].apps |= row.apps
                rows[-1].cells |= row.cells
                continue
            if len(rows) == limit:
                break
            rows.append(row)
        offset += chunk
    return rows


def newest_event_id() -> int:
    return BBSEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0


EVENT_FILTERS = ("type", "app", "cell")


def events_query(values: dict[str, str]) -> str:
    """The history's filters and page as one canonical query string: the page's link and
    its live group are both named by it (dashboard.md M2)."""
    clean = {n: str(values.get(n, "")).strip()[:200] for n in (*EVENT_FILTERS, "page")}
    if clean["type"] == "all":
        clean["type"] = ""  # the filter's own word for "any type"
    if clean["page"] in ("", "1"):
        clean["page"] = ""
    return urlencode({k: v for k, v in clean.items() if v})


def events_history(query: str) -> dict[str, Any]:
    """What the history shows for a canonical query: the page, its filters, the pager's query."""
    values = {k: v[0] for k, v in parse_qs(query).items()}
    filters = {n: values.get(n, "") for n in EVENT_FILTERS}
    page = events_page(values.get("page") or 1, type_=filters["type"], app=filters["app"],
                       cell=filters["cell"])
    return {"events": page, "filters": filters, "query": urlencode({k: v for k, v in filters.items() if v})}


def events_page(page: int | str = 1, *, type_: str = "", app: str = "", cell: str = "") -> Page:
    """One page of the full history, unfolded (dashboard.md M2, KOV #84), newest sim time
    first: at max speed a pass's events can be stored after later ones (the id is when
    the row was written, ``at`` when it happened in the simulation)."""
    qs = _filtered(BBSEvent.objects.order_by("-at", "-id"), type_, app, cell)
    paginator = Paginator(qs.values("id", "at", "type", "key", "cell_id", "data"), PAGE_SIZE)
    result = paginator.get_page(page)
    result.object_list = [_row(v) for v in result.object_list]
    return result
