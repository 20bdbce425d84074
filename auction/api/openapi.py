"""The OpenAPI 3.1 document of /api/v1/, built from the same request tables the API checks.

The document is what the schema-driven fuzz test reads, so a member added to a table
is described and fuzzed without a second list to keep in step.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse

from auction.api import schemas
from auction.api.clock import CLOCK_CHANGE
from auction.api.http import endpoint, ok

_ERROR = {
    "type": "object", "required": ["error"],
    "properties": {"error": {"type": "object", "required": ["type", "message"], "properties": {
        "type": {"type": "string", "enum": [
            "InvalidRequest", "ResourceNotFound", "ResourceExists", "Unauthorized",
            "InvalidStateTransition"]},
        "message": {"type": "string"}}}},
}
_MODIFICATION_TAG = {"type": "object", "properties": {"epoch": {"type": "string"},
                                                       "index": {"type": "integer"}}}
_ACTUAL_LRP = {"type": "object", "properties": {
    "process_guid": {"type": "string"}, "instance_guid": {"type": "string"},
    "cell_id": {"type": "string"}, "domain": {"type": "string"}, "index": {"type": "integer"},
    "state": {"type": "string", "enum": ["UNCLAIMED", "CLAIMED", "RUNNING", "CRASHED"]},
    "address": {"type": "string"},
    "ports": {"type": "array", "items": {"type": "object", "properties": {
        "container_port": {"type": "integer"}, "host_port": {"type": "integer"}}}},
    "placement_error": {"type": "string"},
    "since": {"type": "integer", "description": "Nanoseconds of the simulated clock."},
    "presence": {"type": "string", "enum": ["ORDINARY", "EVACUATING", "SUSPECT"]},
    "crash_count": {"type": "integer"}, "crash_reason": {"type": "string"},
    "modification_tag": _MODIFICATION_TAG, "availability_zone": {"type": "string"},
}}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _answer(description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    body = {"application/json": {"schema": schema or {"type": "object"}}}
    return {"description": description, "content": body}


def _errors(*codes: int) -> dict[str, Any]:
    words = {400: "InvalidRequest: the message names each failed check (bbs.md 1.2)",
             401: "Unauthorized: no session or token", 403: "Unauthorized: not an operator, or CSRF",
             404: "ResourceNotFound", 409: "ResourceExists / InvalidStateTransition"}
    return {str(c): _answer(words[c], _ref("Error")) for c in codes}


_WRITE = [{"token": []}, {"session": []}]
_PAGING = [
    {"name": "page_size", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 1000}},
    {"name": "page_token", "in": "query", "schema": {"type": "string"},
     "description": "next_page_token of the previous page."},
]


def _path(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def _query(name: str, kind: str = "string", **extra: Any) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"type": kind, **extra}}


def _body(schema_name: str) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": _ref(schema_name)}}}


def document() -> dict[str, Any]:
    write_errors = _errors(400, 401, 403)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "diego-web BBS API", "version": "1",
            "description": "A JSON API shaped like Diego's BBS external API. Times are "
                           "nanoseconds of the simulated clock. Reads are public on the demo; "
                           "writes need an operator (session with CSRF, or "
                           "`Authorization: Bearer <token>`).",
        },
        "servers": [{"url": "/api/v1"}],
        "components": {
            "securitySchemes": {
                "token": {"type": "http", "scheme": "bearer"},
                "session": {"type": "apiKey", "in": "cookie", "name": "sessionid"},
            },
            "schemas": {
                "Error": _ERROR,
                "DesiredLRP": schemas.schema_of(schemas.DESIRED_LRP),
                "DesiredLRPUpdateRequest": schemas.schema_of(schemas.DESIRED_LRP_UPDATE),
                "Task": schemas.schema_of(schemas.TASK),
                "DomainUpsert": schemas.schema_of(schemas.DOMAIN_UPSERT),
                "ClockChange": schemas.schema_of(CLOCK_CHANGE),
                "ActualLRP": _ACTUAL_LRP,
            },
        },
        "paths": {
            "/desired_lrps": {
                "get": {"operationId": "listDesiredLRPs",
                        "parameters": [_query("domain"), _query("process_guid"), *_PAGING],
                        "responses": {"200": _answer("A page of desired LRPs"), **_errors(400)}},
                "post": {"operationId": "desireLRP", "security": _WRITE,
                         "requestBody": _body("DesiredLRP"),
                         "responses": {"201": _answer("Desired; one UNCLAIMED instance per index"),
                                       **write_errors, **_errors(409)}},
            },
            "/desired_lrps/{process_guid}": {
                "parameters": [_path("process_guid")],
                "get": {"operationId": "getDesiredLRP",
                        "responses": {"200": _answer("The desired LRP"), **_errors(404)}},
                "patch": {"operationId": "updateDesiredLRP", "security": _WRITE,
                          "requestBody": _body("DesiredLRPUpdateRequest"),
                          "responses": {"200": _answer("Updated; scale-down retires at once"),
                                        **write_errors, **_errors(404)}},
                "delete": {"operationId": "removeDesiredLRP", "security": _WRITE,
                           "responses": {"200": _answer("Removed"), **write_errors, **_errors(404)}},
            },
            "/actual_lrps": {
                "get": {"operationId": "listActualLRPs",
                        "parameters": [_query("domain"), _query("process_guid"),
                                       _query("index", "integer"), _query("cell_id"),
                                       _query("state"), _query("presence"), *_PAGING],
                        "responses": {"200": _answer("A page of actual LRPs", {
                            "type": "object", "properties": {
                                "actual_lrps": {"type": "array", "items": _ref("ActualLRP")},
                                "next_page_token": {"type": ["string", "null"]}}}),
                            **_errors(400)}},
            },
            "/actual_lrps/{process_guid}/{index}": {
                "parameters": [_path("process_guid"), _path("index")],
                "delete": {"operationId": "killActualLRP", "security": _WRITE,
                           "description": "Retire the instance; convergence restarts it.",
                           "responses": {"200": _answer("Killed"), **write_errors, **_errors(404)}},
            },
            "/domains": {
                "get": {"operationId": "listDomains",
                        "responses": {"200": _answer("Fresh domains by name, and all with expiry")}},
            },
            "/domains/{domain}": {
                "parameters": [_path("domain")],
                "put": {"operationId": "upsertDomain", "security": _WRITE,
                        "requestBody": _body("DomainUpsert"),
                        "responses": {"200": _answer("Upserted"), **write_errors}},
            },
            "/tasks": {
                "get": {"operationId": "listTasks",
                        "parameters": [_query("domain"), _query("cell_id"), _query("state"), *_PAGING],
                        "responses": {"200": _answer("A page of tasks"), **_errors(400)}},
                "post": {"operationId": "desireTask", "security": _WRITE, "requestBody": _body("Task"),
                         "responses": {"201": _answer("Desired, PENDING"), **write_errors,
                                       **_errors(409)}},
            },
            "/tasks/{task_guid}": {
                "parameters": [_path("task_guid")],
                "get": {"operationId": "getTask", "responses": {"200": _answer("The task"),
                                                                 **_errors(404)}},
                "delete": {"operationId": "deleteTask", "security": _WRITE,
                           "description": "Resolve and delete a COMPLETED task.",
                           "responses": {"200": _answer("Deleted"), **write_errors,
                                         **_errors(404, 409)}},
            },
            "/tasks/{task_guid}/cancel": {
                "parameters": [_path("task_guid")],
                "post": {"operationId": "cancelTask", "security": _WRITE,
                         "responses": {"200": _answer("COMPLETED, failed: task was cancelled"),
                                       **write_errors, **_errors(404, 409)}},
            },
            "/cells": {"get": {"operationId": "listCells",
                               "responses": {"200": _answer("Cell presences and free resources")}}},
            **{f"/cells/{{cell_id}}/{verb}": {
                "parameters": [_path("cell_id")],
                "post": {"operationId": f"{verb}Cell", "security": _WRITE,
                         "responses": {"200": _answer(f"Cell {done}"), **write_errors,
                                       **_errors(404)}},
            } for verb, done in (("fail", "failed"), ("restore", "restored"), ("drain", "draining"))},
            "/clock": {
                "get": {"operationId": "getClock", "responses": {"200": _answer("The sim clock")}},
                "post": {"operationId": "changeClock", "security": _WRITE,
                         "requestBody": _body("ClockChange"),
                         "responses": {"200": _answer("Changed"), **write_errors}},
            },
            "/events": {"get": {
                "operationId": "streamEvents",
                "description": "Server-sent BBS events (bbs.md 8): id, event type, JSON data. "
                               "Resume with Last-Event-ID or ?after=.",
                "parameters": [_query("stream", enum=["all", "lrp_instances", "lrps", "tasks"]),
                               _query("after", "integer")],
                "responses": {"200": {"description": "text/event-stream",
                                      "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                              **_errors(400)}}},
            "/metrics": {"get": {"operationId": "getMetrics",
                                 "responses": {"200": _answer("bbs.md 9 metrics and counters")}}},
        },
    }


def _get(request: HttpRequest) -> JsonResponse:
    return ok(document())


openapi = endpoint(get=_get)
