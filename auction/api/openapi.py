"""The OpenAPI 3.1 document of /api/v1/, built from the same request tables the API checks.

The document is what the schema-driven fuzz test reads, so a member added to a table
is described and fuzzed without a second list to keep in step. It is kept complete by
tests (tests/api/test_openapi.py): its operations must be exactly the ones the URL conf
routes (``routed_operations``), each with a summary, a typed schema for every success
body and the BBS error shape for every 4xx; the fuzz test checks every answer it gets
against the schema of its status, and that it reached every operation.
"""

from __future__ import annotations

import re
from typing import Any

from django.http import HttpRequest, JsonResponse

from auction.api import schemas
from auction.api.clock import CLOCK_CHANGE
from auction.api.http import MAX_PAGE_SIZE, endpoint, ok

# -- schema helpers ---------------------------------------------------------------------


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _record(required: bool = True, **properties: Any) -> dict[str, Any]:
    """A closed object: every listed member present (when ``required``), no others."""
    schema: dict[str, Any] = {"type": "object", "properties": properties,
                              "additionalProperties": False}
    if required and properties:
        schema["required"] = list(properties)
    return schema


def _list(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def _nullable(kind: str, **extra: Any) -> dict[str, Any]:
    return {"type": [kind, "null"], **extra}


STRING = {"type": "string"}
INTEGER = {"type": "integer"}
NUMBER = {"type": "number"}
BOOLEAN = {"type": "boolean"}
STRINGS = _list(STRING)
NANOSECONDS = {"type": "integer", "description": "Nanoseconds of the simulated clock (0: never)."}
ISO_TIME = _nullable("string", description="Simulated time, ISO 8601 (UTC).")
ANY_OBJECT = {"type": "object"}
EMPTY = _record()

ERROR_TYPES = ["InvalidRequest", "ResourceNotFound", "ResourceExists", "Unauthorized",
               "InvalidStateTransition"]
_ERROR = _record(error=_record(type={"type": "string", "enum": ERROR_TYPES}, message=STRING))
_MODIFICATION_TAG = _record(epoch=STRING, index=INTEGER)
_DESIRED_LRP = _record(
    process_guid=STRING, domain=STRING, rootfs=STRING, instances=INTEGER, memory_mb=INTEGER,
    disk_mb=INTEGER, max_pids=INTEGER, placement_tags=STRINGS, volume_drivers=STRINGS,
    routes=ANY_OBJECT, annotation=STRING, ports=_list(INTEGER), start_timeout_ms=INTEGER,
    modification_tag=_ref("ModificationTag"), start_delay_s=NUMBER, crash_probability=NUMBER,
    crash_after_s=NUMBER,
)
_ACTUAL_LRP = _record(
    process_guid=STRING, instance_guid=STRING, cell_id=STRING, domain=STRING, index=INTEGER,
    state={"type": "string", "enum": ["UNCLAIMED", "CLAIMED", "RUNNING", "CRASHED"]},
    address=STRING,
    ports=_list(_record(container_port=INTEGER, host_port=INTEGER)),
    placement_error=STRING,
    since=NANOSECONDS,
    presence={"type": "string", "enum": ["ORDINARY", "EVACUATING", "SUSPECT"]},
    crash_count=INTEGER, crash_reason=STRING,
    modification_tag=_ref("ModificationTag"), availability_zone=STRING,
)
_TASK = _record(
    task_guid=STRING, domain=STRING,
    state={"type": "string", "enum": ["PENDING", "RUNNING", "COMPLETED", "RESOLVING"]},
    cell_id=STRING, created_at=NANOSECONDS, updated_at=NANOSECONDS,
    first_completed_at=NANOSECONDS, failed=BOOLEAN, failure_reason=STRING, result=STRING,
    rejection_count=INTEGER, rejection_reason=STRING, completion_callback_url=STRING,
    rootfs=STRING, memory_mb=INTEGER, disk_mb=INTEGER, max_pids=INTEGER,
    placement_tags=STRINGS, volume_drivers=STRINGS, annotation=STRING, duration_s=NUMBER,
    placement_mode={"type": "string", "enum": ["diego", "otto"]},
)
_DOMAIN = _record(domain=STRING, ttl={"type": "number", "description": "Seconds; 0 = never."},
                  expires_at=NANOSECONDS, fresh=BOOLEAN)
_RESOURCES = _record(memory_mb=INTEGER, disk_mb=INTEGER, containers=INTEGER)
_CELL = _record(
    cell_id=STRING, zone=STRING, index=INTEGER,
    state={"type": "string", "enum": ["healthy", "draining", "failed"]},
    presence={"type": "boolean", "description": "Whether its presence is still registered."},
    capacity=_ref("Resources"),
    available={"oneOf": [_ref("Resources"), {"type": "null"}],
               "description": "Free resources; null in a chaos action's answer."},
    rootfs_providers=STRINGS, preloaded_rootfses=STRINGS, placement_tags=STRINGS,
    optional_placement_tags=STRINGS, volume_drivers=STRINGS, evacuating=BOOLEAN,
)
_CLOCK = _record(
    now={"type": "number", "description": "Sim seconds."}, now_ns=NANOSECONDS, display=STRING,
    speed=NUMBER, paused=BOOLEAN, convergence_interval_s=NUMBER,
    next_convergence_at=_nullable("number"),
)
_METRICS = _record(
    at=_nullable("integer", description="The last convergence pass, ns; null before the first."),
    metrics={"type": "object", "additionalProperties": NUMBER,
             "description": "bbs.md 9 metrics of the last pass, by name."},
    counters={"type": "object", "additionalProperties": INTEGER},
)
_OTTO_BID = _record(
    bidder=STRING, kind=STRING, attempt=INTEGER, cost=NUMBER,
    breakdown={"type": "object", "additionalProperties": NUMBER}, status=STRING, reason=STRING,
    received_at=ISO_TIME, sent_at=ISO_TIME, skew_s=_nullable("number"), ready_in_s=NUMBER,
    leader=BOOLEAN,
)
_OTTO_AUCTION = _record(
    auction_id=STRING, task_guid=STRING, state=STRING,
    lane={"type": "string", "enum": ["open", "awarded", "closed"]},
    attempt=INTEGER, announcements=INTEGER, capabilities=ANY_OBJECT,
    auction=_record(starts=ISO_TIME, ends=ISO_TIME),
    closes_at=ISO_TIME, closed_at=ISO_TIME, next_announce_at=ISO_TIME,
    leader=_nullable("string"), winner=_nullable("string"), cost=_nullable("number"),
    start_by=ISO_TIME, started_at=ISO_TIME, started_cell=_nullable("string"),
    failure_reason=STRING, note=STRING, unmet=STRINGS,
    history=_list(_record(at=ISO_TIME, text=STRING)),
    bids=_list(_ref("OttoBid")),
)

_COUNTS = {"type": "object", "additionalProperties": INTEGER,
           "description": "cells, zones, desired_lrps, actual_lrps, instances_desired, tasks, domains"}
_FOUNDATION = _record(
    name=STRING, created_at=STRING, summary=_COUNTS, assumptions=STRINGS,
    version={"type": "string", "description": "`v2 sha256:…`: one more at each replace (plans.md 3.3)"},
    size_bytes={"type": "integer", "description": "The kept capture's size (gzip)"},
    captured_at=_nullable("string", description="The capture's newest time; null for a simulator's dump"),
    age_s=_nullable("integer", description="Seconds since the capture was taken"),
    replaced_at=_nullable("string"))
_FOUNDATION_IMPORT = {
    **_record(name=_nullable("string", description="null: loaded into the live cluster"),
              summary=_COUNTS, assumptions=STRINGS,
              warnings={**STRINGS, "description": "Lines skipped as not JSON (a prompt, a notice), "
                                                  "`file:line: …` (plans.md 3.1)"},
              version={"type": "string", "description": "A kept foundation's version"},
              replaced={"type": "boolean", "description": "It took an older version's place"}),
    "required": ["name", "summary", "assumptions", "warnings"]}
_FOUNDATION_DELETED = _record(name=STRING, version=STRING)
_FOUNDATION_UPLOAD = {
    "type": "object", "additionalProperties": False, "required": ["files"],
    "properties": {"name": STRING,
                   "files": _list(_record(name=STRING, content={"type": "string",
                                                                "description": "cfdot JSON Lines"}))},
}
_EXAMPLE_CELL = ('{"cell_id":"cell-x","rep_address":"http://10.0.0.9:1800","zone":"z1",'
                 '"capacity":{"memory_mb":8192,"disk_mb":32768,"containers":250}}\n')


_PLAN_CHANGE = {
    "type": "object", "required": ["action"],
    "properties": {"action": {"type": "string", "enum": [
        "scale", "desire", "remove", "fail_cell", "restore_cell", "drain_cell", "fail_zone",
        "restore_zone", "add_cells", "remove_cell", "auction_config"]},
        "at": {"type": "number", "minimum": 0, "maximum": 3600}},
    "description": "A change and its fields (plans.md 1.2), e.g. scale: process_guid, instances.",
}
_PLAN_REQUEST = {
    "type": "object", "additionalProperties": False,
    "properties": {"base": STRING, "horizon_s": {"type": "number", "minimum": 1, "maximum": 3600},
                   "changes": _list(_PLAN_CHANGE)},
}
_PLAN = _record(
    id=INTEGER, base=STRING,
    base_version={"type": "string", "description": "The named foundation's version the run read "
                                                   "(`v2 sha256:…`, plans.md 3.3); empty for live"},
    changes=_list(ANY_OBJECT), horizon_s=NUMBER,
    status={"type": "string", "enum": ["running", "done", "failed", "cancelled"]},
    progress=NUMBER, error=STRING, base_now=_nullable("number"),
    result={"type": ["object", "null"], "description": "plans.md 1.4; null while running."},
    auctions={**_list(_record(number=INTEGER, detail={"type": "string", "enum": ["full", "summary", "none"]},
                              replay=STRING)),
              "description": "The plan's auctions kept for replay (plans.md 1.7): each one's place in "
                             "result.auctions (from 1), how much of its decision record is kept, and "
                             "the path of its replay page."},
    applied=BOOLEAN, applied_sim=_nullable("number"),
)
_CAPACITY = _record(fits=INTEGER, zones={"type": "object", "additionalProperties": INTEGER},
                    stopped_by=STRING)
_ZONE_LOSS = _record(
    zones={"type": "object", "additionalProperties": _record(
        unplaced=INTEGER, apps_down=STRINGS, apps_degraded=STRINGS, survives=BOOLEAN,
        status={"type": "string", "enum": ["red", "amber", "green"]})},
    horizon_s=NUMBER, base_now=NUMBER,
)
# A big base's answer is the worker's (plans.md 2.2): the request only asks for it.
_ZONE_LOSS_COMPUTING = _record(
    computing={"type": "boolean", "enum": [True]},
    since={"type": "string", "description": "When the worker was asked (ISO 8601)."},
    last={"oneOf": [_ref("ZoneLoss"), {"type": "null"}],
          "description": "The last answer, of an older state of the base (null: none yet)."},
    retry_after_s={**INTEGER, "description": "Ask again after this many seconds (also Retry-After)."},
)


def _page(member: str, item: str) -> dict[str, Any]:
    return _record(**{member: _list(_ref(item)), "next_page_token": _nullable("string")})


# -- operation helpers ------------------------------------------------------------------


def _answer(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


_ERROR_WORDS = {
    400: "InvalidRequest: the message names each failed check (bbs.md 1.2)",
    401: "Unauthorized: no session or token (reads too when DIEGO_API_PUBLIC_READS=0)",
    403: "Unauthorized: not an operator, or a session without its CSRF token",
    404: "ResourceNotFound (also any path no route matches, e.g. a value with a /)",
    409: "ResourceExists / InvalidStateTransition",
    413: "InvalidRequest: the upload is larger than DIEGO_UPLOAD_MAX_MB",
    415: "InvalidRequest: the body was not sent as JSON (bbs.md 1.7)",
    503: "ServiceUnavailable: the Celery worker that does this is out of reach (no broker)",
}


def _errors(*codes: int) -> dict[str, Any]:
    return {str(c): _answer(_ERROR_WORDS[c], _ref("Error")) for c in codes}


_WRITE = [{"token": []}, {"session": []}]
_PAGING = [
    {"name": "page_size", "in": "query",
     "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE}},
    {"name": "page_token", "in": "query", "schema": STRING,
     "description": "next_page_token of the previous page."},
]


# Examples name the demo cluster (scenario seed-example, what `make run` seeds); the
# fuzz test sends each operation's examples first and expects a success.
def _path(name: str, example: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": STRING, "example": example}


def _query(name: str, kind: str = "string", **extra: Any) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"type": kind, **extra}}


def _body(schema_name: str, example: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": _ref(schema_name),
                                                               "example": example}}}


def _read(op_id: str, summary: str, answer: dict[str, Any], *codes: int, login: bool = True,
          accepted: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A GET: public on the demo, 401 when reads need a login (``login``); ``accepted``:
    its other successes (a 202 while a worker works the answer out)."""
    codes = (*codes, 401) if login else codes
    return {"operationId": op_id, "summary": summary, **extra,
            "responses": {"200": answer, **(accepted or {}), **_errors(*sorted(set(codes)))}}


def _write(op_id: str, summary: str, status: int, answer: dict[str, Any], *codes: int,
           **extra: Any) -> dict[str, Any]:
    """A write: an operator's (401 without credentials, 403 without the permission)."""
    return {"operationId": op_id, "summary": summary, "security": _WRITE, **extra,
            "responses": {str(status): answer, **_errors(*sorted({400, 401, 403, *codes}))}}


def document() -> dict[str, Any]:
    doc = _document()
    for item in doc["paths"].values():
        has_path_value = any(p["in"] == "path" for p in item.get("parameters", []))
        for method, op in item.items():
            if method not in HTTP_METHODS:
                continue
            # Any operation: a NUL or a lone surrogate in the path, a query parameter or a
            # header is an InvalidRequest at the edge (bbs.md 1.5); a path value with a /
            # matches no route (ResourceNotFound).
            codes = (400, 404) if has_path_value else (400,)
            # A JSON body sent as anything else is refused before it is parsed (bbs.md 1.7).
            if "requestBody" in op:
                codes = (*codes, 415)
            op["responses"].update({code: answer for code, answer in _errors(*codes).items()
                                    if code not in op["responses"]})
            op["responses"] = dict(sorted(op["responses"].items()))
    return doc


def _document() -> dict[str, Any]:
    cell_verbs = (("fail", "Fail a cell: its presence lapses 10-15 sim-s later", "failed"),
                  ("restore", "Restore a failed or draining cell", "restored"),
                  ("drain", "Drain a cell: evacuate its instances", "draining"))
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "diego-web BBS API", "version": "1",
            "description": "A JSON API shaped like Diego's BBS external API. Times are "
                           "nanoseconds of the simulated clock. Reads are public on the demo; "
                           "writes need an operator (the control permission; session with "
                           "CSRF, or `Authorization: Bearer <token>`). Errors are "
                           '`{"error": {"type", "message"}}`.',
        },
        "servers": [{"url": "/api/v1"}],
        "components": {
            "securitySchemes": {
                "token": {"type": "http", "scheme": "bearer"},
                "session": {"type": "apiKey", "in": "cookie", "name": "sessionid"},
            },
            "schemas": {
                "Error": _ERROR,
                "DesiredLRPRequest": schemas.schema_of(schemas.DESIRED_LRP),
                "DesiredLRPUpdateRequest": schemas.schema_of(schemas.DESIRED_LRP_UPDATE),
                "TaskRequest": schemas.schema_of(schemas.TASK),
                "DomainUpsert": schemas.schema_of(schemas.DOMAIN_UPSERT),
                "ClockChange": schemas.schema_of(CLOCK_CHANGE),
                "ModificationTag": _MODIFICATION_TAG,
                "DesiredLRP": _DESIRED_LRP,
                "ActualLRP": _ACTUAL_LRP,
                "Task": _TASK,
                "Domain": _DOMAIN,
                "Resources": _RESOURCES,
                "Cell": _CELL,
                "Clock": _CLOCK,
                "Metrics": _METRICS,
                "OttoBid": _OTTO_BID,
                "OttoAuction": _OTTO_AUCTION,
                "Foundation": _FOUNDATION,
                "FoundationDeleted": _FOUNDATION_DELETED,
                "FoundationImport": _FOUNDATION_IMPORT,
                "FoundationUpload": _FOUNDATION_UPLOAD,
                "FoundationReplace": {**_FOUNDATION_UPLOAD, "properties": {
                    "files": _FOUNDATION_UPLOAD["properties"]["files"]}},
                "PlanRequest": _PLAN_REQUEST,
                "Plan": _PLAN,
                "Capacity": _CAPACITY,
                "ZoneLoss": _ZONE_LOSS,
            },
        },
        "paths": {
            "/": {"get": _read("getIndex", "The API's resources and this document's address",
                               _answer("Index", _record(openapi=STRING, resources=STRINGS)),
                               login=False)},
            "/openapi.json": {"get": _read(
                "getOpenAPI", "This OpenAPI document",
                _answer("OpenAPI 3.1", {"type": "object", "required": ["openapi", "info", "paths"]}),
                login=False)},
            "/desired_lrps": {
                "get": _read("listDesiredLRPs", "List desired LRPs, by domain or process_guid",
                             _answer("A page of desired LRPs", _page("desired_lrps", "DesiredLRP")),
                             400, parameters=[_query("domain"), _query("process_guid"), *_PAGING]),
                "post": _write("desireLRP", "Desire an LRP (DesireLRP)", 201,
                               _answer("Desired; one UNCLAIMED instance per index",
                                       _record(desired_lrp=_ref("DesiredLRP"))),
                               409, requestBody=_body("DesiredLRPRequest", {
                                   "process_guid": "web", "domain": "cf-apps",
                                   "rootfs": "preloaded:cflinuxfs4", "instances": 3,
                                   "memory_mb": 128, "disk_mb": 256, "ports": [8080]})),
            },
            "/desired_lrps/{process_guid}": {
                "parameters": [_path("process_guid", "lrp-a")],
                "get": _read("getDesiredLRP", "One desired LRP by process_guid",
                             _answer("The desired LRP", _record(desired_lrp=_ref("DesiredLRP"))), 404),
                "patch": _write("updateDesiredLRP", "Update instances, routes or annotation", 200,
                                _answer("Updated; scale-down retires at once",
                                        _record(desired_lrp=_ref("DesiredLRP"))),
                                404, requestBody=_body("DesiredLRPUpdateRequest", {"instances": 2})),
                "delete": _write("removeDesiredLRP", "Remove a desired LRP and its instances", 200,
                                 _answer("Removed", EMPTY), 404),
            },
            "/actual_lrps": {
                "get": _read("listActualLRPs", "List actual LRPs (instances) with the seed's filters",
                             _answer("A page of actual LRPs", _page("actual_lrps", "ActualLRP")), 400,
                             parameters=[_query("domain"), _query("process_guid"),
                                         _query("index", "integer"), _query("cell_id"),
                                         _query("state"), _query("presence"), *_PAGING]),
            },
            "/actual_lrps/{process_guid}/{index}": {
                "parameters": [_path("process_guid", "lrp-a"), _path("index", "0")],
                "delete": _write("killActualLRP", "Kill one instance (RetireActualLRP)", 200,
                                 _answer("Killed", EMPTY), 404,
                                 description="Retire the instance; convergence restarts it."),
            },
            "/domains": {
                "get": _read("listDomains", "Fresh domains, and every domain with its expiry",
                             _answer("Domains", _record(domains=STRINGS, all=_list(_ref("Domain"))))),
            },
            "/domains/{domain}": {
                "parameters": [_path("domain", "cf-apps")],
                "put": _write("upsertDomain", "Upsert a domain with a TTL (UpsertDomain)", 200,
                              _answer("Upserted", _record(domain=_ref("Domain"))), 404,
                              requestBody=_body("DomainUpsert", {"ttl": 120}),
                              description="An empty domain (`PUT /domains/`) is refused with "
                                          "`Invalid field: domain`."),
            },
            "/tasks": {
                "get": _read("listTasks", "List tasks, by domain, cell or state",
                             _answer("A page of tasks", _page("tasks", "Task")), 400,
                             parameters=[_query("domain"), _query("cell_id"), _query("state"),
                                         *_PAGING]),
                "post": _write("desireTask", "Desire a task (DesireTask)", 201,
                               _answer("Desired, PENDING", _record(task=_ref("Task"))),
                               409, requestBody=_body("TaskRequest", {
                                   "task_guid": "report", "domain": "cf-tasks",
                                   "rootfs": "docker:///busybox", "memory_mb": 64,
                                   "duration_s": 600})),
            },
            "/tasks/{task_guid}": {
                # task-d once it completed: only a COMPLETED task can be deleted.
                "parameters": [_path("task_guid", "task-d")],
                "get": _read("getTask", "One task by task_guid",
                             _answer("The task", _record(task=_ref("Task"))), 404),
                "delete": _write("deleteTask", "Resolve and delete a COMPLETED task", 200,
                                 _answer("Deleted", EMPTY), 404, 409),
            },
            "/tasks/{task_guid}/cancel": {
                "parameters": [_path("task_guid", "task-c")],
                "post": _write("cancelTask", "Cancel a task (CancelTask)", 200,
                               _answer("COMPLETED, failed: task was cancelled",
                                       _record(task=_ref("Task"))), 404, 409),
            },
            "/cells": {"get": _read("listCells", "Cell presences, capacity and free resources",
                                    _answer("Cells", _record(cells=_list(_ref("Cell")))))},
            **{f"/cells/{{cell_id}}/{verb}": {
                "parameters": [_path("cell_id", "cell-1")],
                "post": _write(f"{verb}Cell", summary, 200,
                               _answer(f"Cell {done}", _record(cell=_ref("Cell"))), 404),
            } for verb, summary, done in cell_verbs},
            "/clock": {
                "get": _read("getClock", "The simulated clock",
                             _answer("The sim clock", _record(clock=_ref("Clock")))),
                "post": _write("changeClock", "Pause, resume, set the speed or step the clock", 200,
                               _answer("Changed", _record(clock=_ref("Clock"))),
                               requestBody=_body("ClockChange", {"speed": 10})),
            },
            "/events": {"get": _read(
                "streamEvents", "Server-sent BBS events, like cfdot watch",
                {"description": "text/event-stream: `id:`, `event:` and `data:` (JSON) per event",
                 "content": {"text/event-stream": {"schema": STRING}}},
                400,
                description="Server-sent BBS events (bbs.md 8): id, event type, JSON data. "
                            "Resume with Last-Event-ID or ?after=.",
                parameters=[_query("stream", enum=["all", "lrp_instances", "lrps", "tasks"]),
                            _query("after", "integer", minimum=0),
                            {"name": "Last-Event-ID", "in": "header", "schema": STRING}])},
            "/foundations": {
                "get": _read("listFoundations", "The named foundations (plans.md 3.3)",
                             _answer("Named foundations", _record(foundations=_list(_ref("Foundation"))))),
                "post": _write(
                    "importFoundation", "Import a cfdot capture: into the live cluster, or kept as `name`",
                    201, _answer("Imported", _ref("FoundationImport")), 413,
                    description="plans.md 3.6. Multipart (`file` parts, repeated; `name`) or JSON. "
                                "Without `name` the capture replaces the live cluster. A refused "
                                "capture is a 400 whose message is `file:line: field: why`.",
                    requestBody={"required": True, "content": {
                        "application/json": {"schema": _ref("FoundationUpload"), "example": {
                            "name": "example-foundation",
                            "files": [{"name": "cells.jsonl", "content": _EXAMPLE_CELL}]}},
                        "multipart/form-data": {"schema": {
                            "type": "object", "properties": {"file": _list({"type": "string",
                                                                            "format": "binary"}),
                                                             "name": STRING}}},
                    }}),
            },
            "/foundations/{name}": {
                "parameters": [_path("name", "kept-foundation")],
                "put": _write(
                    "replaceFoundation", "Keep a cfdot capture as the foundation `name`, its next "
                    "version when it exists", 200, _answer("Kept", _ref("FoundationImport")), 413,
                    description="plans.md 3.3. The body is `importFoundation`'s without `name` "
                                "(the path names it); the live cluster is untouched.",
                    requestBody={"required": True, "content": {
                        "application/json": {"schema": _ref("FoundationReplace"), "example": {
                            "files": [{"name": "cells.jsonl", "content": _EXAMPLE_CELL}]}},
                        "multipart/form-data": {"schema": {
                            "type": "object", "properties": {"file": _list({"type": "string",
                                                                            "format": "binary"})}}},
                    }}),
                "delete": _write("deleteFoundation", "Delete the named foundation (plans.md 3.3)", 200,
                                 _answer("Deleted", _ref("FoundationDeleted")), 404),
            },
            "/metrics": {"get": _read("getMetrics", "The bbs.md 9 metrics and the counters",
                                      _answer("Metrics", _ref("Metrics")))},
            "/open_auctions": {"get": _read(
                "listOpenAuctions", "Otto's open auctions with their bids (the /otto/ board)",
                _answer("Open auctions", _record(open_auctions=_list(_ref("OttoAuction")))))},
            "/plans": {
                "post": _write("createPlan", "Run a what-if plan against the live cluster or a "
                               "foundation (plans.md 1); it never changes the live cluster", 201,
                               _answer("The plan: its result when it ran inside the request, else "
                                       "status running with progress (poll GET)",
                                       _record(plan=_ref("Plan"))),
                               requestBody=_body("PlanRequest", {
                                   "base": "live", "horizon_s": 120,
                                   "changes": [{"action": "fail_zone", "zone": "z2"},
                                               {"action": "scale", "process_guid": "lrp-a",
                                                "instances": 4, "at": 30}]})),
            },
            "/plans/{plan_id}": {
                "parameters": [_path("plan_id", "latest")],
                "get": _read("getPlan", "One plan by id (or latest): status, progress, result",
                             _answer("The plan", _record(plan=_ref("Plan"))), 404),
                "delete": _write("discardPlan", "Discard a plan (a running one stops)", 200,
                                 _answer("Discarded", EMPTY), 404),
            },
            "/capacity": {"get": _read(
                "getCapacity", "How many more instances of a shape fit, per zone (plans.md 2.1)",
                _answer("Capacity", _record(capacity=_ref("Capacity"))), 400,
                parameters=[_query("memory_mb", "integer", minimum=0, example=1024),
                            _query("disk_mb", "integer", minimum=0, example=1024), _query("rootfs"),
                            _query("placement_tags"), _query("volume_drivers"),
                            _query("kind", enum=["lrp", "task"]), _query("base")])},
            "/capacity/zone_loss": {"get": _read(
                "getZoneLoss", "N-1: each zone failed in turn (plans.md 2.2); 202 while the worker "
                "works a big base's answer out",
                _answer("Zone loss", _ref("ZoneLoss")), 400, 503, parameters=[_query("base")],
                accepted={"202": {**_answer("Being worked out by the worker: ask again after Retry-After "
                                            "seconds", _ZONE_LOSS_COMPUTING),
                                  "headers": {"Retry-After": {"schema": INTEGER}}}})},
            "/auctions/{auction_id}": {
                "parameters": [_path("auction_id", "a-1")],
                "get": _read("getAuction", "One Otto auction, open or closed",
                             _answer("The auction", _record(auction=_ref("OttoAuction"))), 404),
            },
        },
    }


HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
# A route whose URL is one value of a documented template: ``domains/`` is
# ``/domains/{domain}`` with an empty domain (Django's <str:…> never matches "").
ROUTE_ALIASES = {"/domains/": "/domains/{domain}"}
_CONVERTER = re.compile(r"<(?:\w+:)?(\w+)>")


def documented_operations(doc: dict[str, Any] | None = None) -> set[tuple[str, str]]:
    """(path, METHOD) for every operation of the document."""
    doc = doc or document()
    return {(path, method.upper()) for path, item in doc["paths"].items()
            for method in item if method in HTTP_METHODS}


def routed_operations() -> set[tuple[str, str]]:
    """(path, METHOD) for every route of auction/api/urls.py, in the document's spelling.

    Each view names its methods (``endpoint`` does it; ``answers`` for the rest); the
    catch-all JSON 404 is not an operation.
    """
    from auction.api.urls import not_found, urlpatterns

    found: set[tuple[str, str]] = set()
    for pattern in urlpatterns:
        if pattern.callback is not_found:
            continue
        path = "/" + _CONVERTER.sub(r"{\1}", str(pattern.pattern))
        path = ROUTE_ALIASES.get(path, path)
        methods = getattr(pattern.callback, "methods", None)
        if not methods:
            raise AssertionError(f"{path}: its view names no methods (use endpoint() or answers())")
        found.update((path, method) for method in methods)
    return found


def _get(request: HttpRequest) -> JsonResponse:
    return ok(document())


openapi = endpoint(get=_get)
