"""Schema-driven fuzz of /api/v1/ from its own OpenAPI document (issue 5).

For every operation of the document, hypothesis sends bodies drawn from the
operation's JSON Schema (``from_schema`` below reads the document's subset), bodies with members of any JSON type,
arbitrary JSON, and path/query values of any text. It checks that:
- nothing answers 5xx, and every answer is JSON; every 4xx carries a BBS error;
- a refused request changes nothing (the database's fingerprint is the same);
- an accepted write is whole: exactly one audit entry, and a desired LRP it leaves has
  an ORDINARY row for every index below ``instances`` unless an instance was killed.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auction.api.openapi import document
from auction.models import (
    ActualLRP,
    AuditEntry,
    Cell,
    DesiredLRP,
    Domain,
    PendingWork,
    SimClock,
    Task,
)

pytestmark = pytest.mark.django_db

DOC = document()
# Examples must stay quick: the fuzz asks for at most 40 instances (the API allows 100,000).
FUZZ_MAX_INSTANCES = 40

KNOWN_IDS = ["lrp-a", "lrp-b", "task-c", "task-d", "cf-apps", "cell-1", "web", "0", "1"]
text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30)
path_value = st.one_of(st.sampled_from(KNOWN_IDS), text.filter(lambda s: s not in ("", ".", "..")))
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40),
                      st.floats(allow_nan=False, allow_infinity=False), text)
any_json = st.recursive(json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(text, inner, max_size=4)), max_leaves=12)


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid for the JSON Schema subset the document uses."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]),
                       max_size=min(schema.get("maxLength", 40), 40)) | st.sampled_from(
            ["web", "cf-apps", "preloaded:cflinuxfs4", "docker:///busybox", "lrp-a", "task-c"])
    if kind == "integer":
        return st.integers(schema.get("minimum", -(2**31)), schema.get("maximum", 2**31 - 1))
    if kind == "number":
        top = schema.get("maximum", 1e6)
        return st.floats(-1e6, top, allow_nan=False) | st.integers(-1000, int(min(top, 1000)))
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(from_schema(schema["items"]), max_size=4)
    if kind == "object" and "properties" in schema:
        required = set(schema.get("required", []))
        props = {n: from_schema(s) for n, s in schema["properties"].items()}
        return st.fixed_dictionaries({n: v for n, v in props.items() if n in required},
                                     optional={n: v for n, v in props.items() if n not in required})
    if kind == "object":
        return st.dictionaries(text, any_json, max_size=3)
    return any_json


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref:
        return copy.deepcopy(DOC["components"]["schemas"][ref.rsplit("/", 1)[1]])
    return copy.deepcopy(schema)


def _body_strategy(operation: dict[str, Any]) -> st.SearchStrategy[Any]:
    schema = _resolve(operation["requestBody"]["content"]["application/json"]["schema"])
    instances = schema["properties"].get("instances")
    if instances is not None:
        instances["maximum"] = FUZZ_MAX_INSTANCES
    names = list(schema["properties"])
    wrong_types = st.fixed_dictionaries({}, optional={n: any_json for n in names})
    return st.one_of(from_schema(schema), wrong_types, any_json)


def _streams(op: dict[str, Any]) -> bool:
    return "text/event-stream" in op["responses"].get("200", {}).get("content", {})


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    """Every operation but the endless event stream (its own tests read it with curl)."""
    return [(path, method, op) for path, item in DOC["paths"].items()
            for method, op in item.items() if method != "parameters" and not _streams(op)]


def fingerprint() -> str:
    digest = hashlib.sha256()
    for model, fields in (
        (DesiredLRP, ("process_guid", "instances", "routes", "annotation", "modification_tag_index")),
        (ActualLRP, ("desired_id", "index", "presence", "state", "cell_id")),
        (Task, ("task_guid", "state", "failed", "failure_reason")),
        (Domain, ("name", "ttl_s", "expires_at")),
        (Cell, ("cell_id", "state")),
        (SimClock, ("paused", "speed")),
        (PendingWork, ("ident",)),
        (AuditEntry, ("id",)),
    ):
        rows = sorted(map(repr, model.objects.values_list(*fields)))
        digest.update(json.dumps(rows).encode())
    return digest.hexdigest()


def ordinary_indices_complete(killed: set[str]) -> bool:
    for guid, instances in DesiredLRP.objects.values_list("process_guid", "instances"):
        have = set(ActualLRP.objects.filter(desired_id=guid, presence="ORDINARY", index__lt=instances)
                   .values_list("index", flat=True))
        if guid not in killed and have != set(range(instances)):
            return False
    return True


@pytest.mark.parametrize(("path", "method", "operation"), _operations(),
                         ids=[f"{m.upper()} {p}" for p, m, _ in _operations()])
def test_no_500_and_no_half_applied_write(path, method, operation, cluster, token) -> None:
    client = Client()
    params = [p["name"] for p in DOC["paths"][path].get("parameters", []) if p["in"] == "path"]
    query = [p["name"] for p in operation.get("parameters", []) if p["in"] == "query"]
    body_strategy = _body_strategy(operation) if "requestBody" in operation else st.just(None)
    killed: set[str] = set()

    @settings(max_examples=40, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture])
    @given(values=st.fixed_dictionaries({n: path_value for n in params}),
           queries=st.fixed_dictionaries({}, optional={q: text for q in query}),
           body=body_strategy)
    def call(values: dict[str, str], queries: dict[str, str], body: Any) -> None:
        url = "/api/v1" + path
        for name, value in values.items():
            url = url.replace("{" + name + "}", quote(value, safe=""))
        if queries:
            url += "?" + urlencode(queries)
        before = fingerprint()
        audits = AuditEntry.objects.count()
        response = client.generic(method.upper(), url, data=json.dumps(body) if body is not None else "",
                                  content_type="application/json",
                                  headers={"Authorization": f"Bearer {token}"})
        status = response.status_code
        assert status < 500, (method, url, body, response.content[:300])
        answer = json.loads(response.content)
        if status >= 400:
            assert set(answer) == {"error"} and set(answer["error"]) == {"type", "message"}, answer
            assert fingerprint() == before, ("a refused request changed the database", method, url, body)
            return
        if method != "get":
            assert AuditEntry.objects.count() == audits + 1, (method, url, body)
            if path.startswith("/actual_lrps/"):
                killed.add(values["process_guid"])
        assert ordinary_indices_complete(killed), (method, url, body)

    call()
