"""``GET /api/v1/events``: the BBS event stream as server-sent events (bbs.md 8).

Each event is ``id:`` (the log's counter), ``event:`` (its type) and ``data:`` (JSON:
key, cell, sim time in ns, and the before/after payload), like Diego's ``/v1/events``
that ``cfdot watch`` reads. A reconnecting client sends ``Last-Event-ID`` (or
``?after=``) and resumes where it left off, as far back as the bounded log reaches.
The stream reads the log, not the live channel layer: the log is the truth, so a
dropped notification can never lose an event.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

from auction.api.auth import caller, reader
from auction.api.http import answers, error_response, nanoseconds
from auction.models import BBSEvent
from auction.services.errors import BBSError, InvalidRequest

POLL_S = 0.25
KEEPALIVE_S = 15.0
BATCH = 500

# Diego's streams: instance events (the current API), the legacy group stream, tasks.
# "all" adds the simulator's own events (auctions, passes, chaos, audit) from the same log.
DESIRED = frozenset({"desired_lrp_created", "desired_lrp_changed", "desired_lrp_removed"})
INSTANCE = frozenset({"actual_lrp_instance_created", "actual_lrp_instance_changed",
                      "actual_lrp_instance_removed", "actual_lrp_crashed"})
GROUP = frozenset({"actual_lrp_created", "actual_lrp_changed", "actual_lrp_removed",
                   "actual_lrp_crashed"})
TASK = frozenset({"task_created", "task_changed", "task_removed"})
STREAMS: dict[str, Callable[[str], bool]] = {
    "all": lambda t: True,
    "lrp_instances": (DESIRED | INSTANCE).__contains__,
    "lrps": (DESIRED | GROUP).__contains__,
    "tasks": TASK.__contains__,
}


# What an anonymous reader sees instead of an operator's username (dashboard.md AD8).
ANONYMOUS_OPERATOR = "an operator"


def sse_frame(event: BBSEvent, names: bool = False) -> str:
    """One event as SSE; ``names`` only for a signed-in reader (dashboard.md AD8)."""
    data = {"key": event.key, "cell_id": event.cell_id, "at": nanoseconds(event.at), **event.data}
    if data.get("user") and not names:
        data["user"] = ANONYMOUS_OPERATOR
    return f"id: {event.id}\nevent: {event.type}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def events_after(last_id: int, wanted: Callable[[str], bool]) -> tuple[list[BBSEvent], int]:
    """The next events after ``last_id`` that the stream wants, and the id read up to."""
    rows = list(BBSEvent.objects.filter(id__gt=last_id).order_by("id")[:BATCH])
    if not rows:
        return [], last_id
    return [r for r in rows if wanted(r.type)], rows[-1].id


def latest_id() -> int:
    return BBSEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0


def _start_id(request: HttpRequest) -> int | None:
    raw = request.headers.get("Last-Event-ID") or request.GET.get("after")
    if raw is None or raw == "":
        return None
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:  # "²".isdigit() too
        raise InvalidRequest("Invalid field: after")
    return int(raw)


def signed_in(request: HttpRequest) -> bool:
    """A session or a valid token: such a reader may see who made a change."""
    try:
        return caller(request)[0] is not None
    except BBSError:
        return False


async def _frames(last_id: int, wanted: Callable[[str], bool], names: bool = False) -> AsyncIterator[str]:
    yield ": diego-web BBS events\n\n"
    idle = 0.0
    while True:
        events, last_id = await sync_to_async(events_after)(last_id, wanted)
        for event in events:
            yield sse_frame(event, names)
        if events:
            idle = 0.0
            continue
        await asyncio.sleep(POLL_S)
        idle += POLL_S
        if idle >= KEEPALIVE_S:
            idle = 0.0
            yield ": keepalive\n\n"


@answers("GET")
async def events(request: HttpRequest) -> HttpResponse:
    try:
        await sync_to_async(reader)(request)
        if request.method not in ("GET", "HEAD"):
            raise InvalidRequest(f"method {request.method} not allowed; allowed: GET")
        stream = request.GET.get("stream", "all")
        if stream not in STREAMS:
            raise InvalidRequest("Invalid field: stream")
        start = _start_id(request)
        names = await sync_to_async(signed_in)(request)
    except BBSError as error:
        return error_response(error)
    if start is None:
        start = await sync_to_async(latest_id)()
    response = StreamingHttpResponse(_frames(start, STREAMS[stream], names), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    return response
