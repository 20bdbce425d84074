"""``/api/v1/tasks``: desire, list, read, cancel, delete (bbs.md 7)."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.http import HttpRequest, JsonResponse

from auction.api import schemas
from auction.api.auth import operator, reader
from auction.api.http import endpoint, json_body, ok, page, query_text
from auction.api.representations import task_json
from auction.bbs.validation import bbs_message, invalid
from auction.models import Task
from auction.services import tasks
from auction.services.errors import InvalidRequest, ResourceNotFound

_MEMBERS = {m.name for m in schemas.TASK}
STATES = {s.value for s in Task.State}


def _url_ok(url: str) -> bool:
    if url == "":
        return True
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _list(request: HttpRequest) -> JsonResponse:
    reader(request)
    rows = Task.objects.all()
    for name in ("domain", "cell_id"):
        value = query_text(request, name)
        if value is not None:
            rows = rows.filter(**{name: value})
    state = request.GET.get("state")
    if state is not None:
        if state not in STATES:
            raise InvalidRequest("Invalid field: state")
        rows = rows.filter(state=state)
    found, next_token = page(request, rows, [("task_guid", str)])
    return ok({"tasks": [task_json(t) for t in found], "next_page_token": next_token})


def _desire(request: HttpRequest) -> JsonResponse:
    user = operator(request)
    body = json_body(request)
    errors = schemas.type_errors(body, schemas.TASK)
    errors += [invalid(name) for name in body if name not in _MEMBERS]
    if not errors and not _url_ok(body.get("completion_callback_url", "")):
        errors.append(invalid("completion_callback_url"))
    if errors:
        raise InvalidRequest(bbs_message(errors))
    spec = {"task_guid": "", "domain": "", "rootfs": "", **body}
    task = tasks.task_desire(spec, source="api", user=user)
    return ok({"task": task_json(task)}, status=201)


def _get(request: HttpRequest, task_guid: str) -> JsonResponse:
    reader(request)
    task = Task.objects.filter(task_guid=task_guid).first()
    if task is None:
        raise ResourceNotFound()
    return ok({"task": task_json(task)})


def _delete(request: HttpRequest, task_guid: str) -> JsonResponse:
    user = operator(request)
    tasks.task_delete(task_guid, source="api", user=user)
    return ok({})


def _cancel(request: HttpRequest, task_guid: str) -> JsonResponse:
    user = operator(request)
    task = tasks.task_cancel(task_guid, source="api", user=user)
    return ok({"task": task_json(task)})


collection = endpoint(get=_list, post=_desire)
member = endpoint(get=_get, delete=_delete)
cancel = endpoint(post=_cancel)
