"""Schema-driven fuzz of /api/v1/ from its own OpenAPI document (issue 5).

For every operation of the document (the event stream included), hypothesis first sends
the operation's documented examples, then bodies drawn from the operation's JSON Schema
(``from_schema`` below reads the document's subset), bodies with members of any JSON
type, arbitrary JSON, and path/query/header values of any text; mostly as an operator,
sometimes with no credentials or as a staff user without the control permission. It
checks that:
- nothing answers 5xx; every answer's status is one the operation documents, and its
  body matches that response's schema (4xx: the BBS error shape);
- a refused write changes nothing (the database's fingerprint is the same), and a
  write by a non-operator is always refused (401/403; 404 when no route matched);
- an accepted write is whole: exactly one audit entry, and a desired LRP it leaves has
  an ORDINARY row for every index below ``instances`` unless an instance was killed;
- every operation answered at least one success, and the operations exercised are
  exactly the document's.

Then, surely rather than now and then (bbs.md 1.5): every HOSTILE value (NUL, lone
surrogates sent as their bytes or JSON escapes, non-ASCII digits, huge numbers, deep
nesting, long strings) in every path, query and header slot of every operation, every raw
body (JSON nested 3,000 deep, 1e999, \u0000), and every path with every HTTP method,
documented or not. The module's last test prints the request count and asserts no 5xx.

The cluster is seed-example on a paused clock, with task-d cancelled (COMPLETED, so it
can be deleted), one Otto auction with two bids, and the named foundation kept-foundation
(kept from the cluster) to replace and delete.
"""

from __future__ import annotations

import copy
import json
import os
from collections import defaultdict
from typing import Any
from urllib.parse import quote

import pytest
from asgiref.sync import async_to_sync
from django.db import transaction
from django.test import Client
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from auction.api.openapi import HTTP_METHODS, document, documented_operations
from auction.bbs.validation import storable_text
from auction.models import ActualLRP, AuditEntry, BBSEvent, DesiredLRP
from tests.api.cluster_state import fingerprint
from tests.api.json_schema import errors as schema_errors

pytestmark = pytest.mark.django_db

DOC = document()
COMPONENTS = DOC["components"]["schemas"]
# Examples per operation (after its documented example), then the hostile sweep (every
# HOSTILE value in every path/query/header slot, every raw body): 50 keep the module
# around 2,000 requests in 20-40 s on two cores; DIEGO_FUZZ_EXAMPLES raises it for a
# longer hunt.
EXAMPLES = int(os.environ.get("DIEGO_FUZZ_EXAMPLES", "50"))
# Examples must stay quick: the fuzz asks for at most 40 instances (the API allows 100,000).
FUZZ_MAX_INSTANCES = 40

KNOWN_IDS = ["lrp-a", "lrp-b", "task-c", "task-d", "cf-apps", "cell-1", "web", "0", "1"]
# Hostile values (bbs.md 1.5): NUL, lone surrogates (sent as the bytes or JSON escapes
# that carry them), digits that are not ASCII, huge numbers, deep nesting, long strings.
HOSTILE = ["\x00", "a\x00b", "\ud800", "x\udfff", "²", "٣", "9" * 40, "-" + "9" * 25, "1e309",
           "%00", "(" * 400, "-" * 998, "[" * 300, "WyJcdWQ4MDAiXQ==", "x" * 2000, " ", "../x"]
hostile = st.sampled_from(HOSTILE)
text = st.text(st.characters(codec="utf-8"), max_size=30) | hostile
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40),
                      st.sampled_from([2**63 - 1, 2**64, -(2**63), 10**20, 10**300]),
                      st.floats(allow_nan=False, allow_infinity=False), text)
any_json = st.recursive(json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(text, inner, max_size=4)), max_leaves=12)


class Raw(str):
    """A body sent as it is: JSON too deep for json.dumps, numbers beyond a double."""


RAW_LIST = [Raw("[" * 5000 + "]" * 5000), Raw('{"a":' * 3000 + "1" + "}" * 3000),
                              Raw('{"instances": 1e999}'), Raw('{"instances": 100000000000000000000}'),
                              Raw('{"ttl": 1e300}'), Raw('{"domain": "\\u0000"}'),
                              Raw('{"process_guid": "\\ud800"}'), Raw("\xff\xfe"), Raw("")]
RAW_BODIES = st.sampled_from(RAW_LIST)


def wire(value: str) -> str:
    """A value percent-encoded as a client would send it; a lone surrogate goes as the
    (invalid UTF-8) bytes that encode it."""
    return quote(value.encode("utf-8", "surrogatepass"), safe="")

# (path, METHOD) → the statuses it answered; read by the last test of the module.
SEEN: dict[tuple[str, str], set[int]] = defaultdict(set)
# [answers below 500, answers 5xx]: the module's last test reports them.
REQUESTS = [0, 0]


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid for the JSON Schema subset the document uses."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return st.text(st.characters(codec="utf-8"),
                       max_size=min(schema.get("maxLength", 40), 40)) | hostile | st.sampled_from(
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
        return copy.deepcopy(COMPONENTS[ref.rsplit("/", 1)[1]])
    return copy.deepcopy(schema)


def _body_strategy(operation: dict[str, Any]) -> st.SearchStrategy[Any]:
    schema = _resolve(operation["requestBody"]["content"]["application/json"]["schema"])
    instances = schema["properties"].get("instances")
    if instances is not None:
        instances["maximum"] = FUZZ_MAX_INSTANCES
    names = list(schema["properties"])
    wrong_types = st.fixed_dictionaries({}, optional={n: any_json for n in names})
    return st.one_of(from_schema(schema), wrong_types, any_json, RAW_BODIES)


def _streams(op: dict[str, Any]) -> bool:
    return "text/event-stream" in op["responses"].get("200", {}).get("content", {})


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, item in DOC["paths"].items()
            for method, op in item.items() if method in HTTP_METHODS]


def ordinary_indices_complete(killed: set[str]) -> bool:
    for guid, instances in DesiredLRP.objects.values_list("process_guid", "instances"):
        have = set(ActualLRP.objects.filter(desired_id=guid, presence="ORDINARY", index__lt=instances)
                   .values_list("index", flat=True))
        if guid not in killed and have != set(range(instances)):
            return False
    return True


@pytest.fixture
def credentials(token: str) -> dict[str, dict[str, str]]:
    """Authorization headers: the operator's token, none, a staff user's without ``control``."""
    from django.contrib.auth.models import User

    from auction.models import ApiToken

    staff = User.objects.create_user("staff-viewer", is_staff=True)
    return {"operator": {"Authorization": f"Bearer {token}"}, "anonymous": {},
            "staff": {"Authorization": f"Bearer {ApiToken.issue(staff, 'fuzz')[1]}"}}


@pytest.fixture
def fuzz_cluster(cluster: None) -> dict[str, str]:
    """seed-example, task-d COMPLETED, one Otto auction with bids; the ids that vary by run."""
    from auction.otto import messages as msg
    from auction.services.otto import (
        IncomingBid,
        otto_auction_open,
        otto_bids_record,
        otto_task_message,
    )
    from auction.services.otto_orchestrators import otto_roster_refresh, otto_roster_sync
    from auction.services.tasks import task_cancel, task_desire

    task_cancel("task-d")
    otto_roster_sync(elastic=False)
    otto_roster_refresh(["cell-1", "cell-2"])
    with transaction.atomic():
        task = task_desire({"task_guid": "task-o", "domain": "cf-tasks", "rootfs": "docker:///x",
                            "memory_mb": 512, "placement_mode": "otto"})
    opened = otto_auction_open(otto_task_message(task, 0.0), 0.0)
    auction_id = opened.outbound[0][2]["auction_id"]
    otto_bids_record([
        IncomingBid(msg.validate(msg.bid_message(auction_id, 1, who, "agent", cost, {"run": cost}, 0, 1.0)),
                    1.0 + i, i)
        for i, (who, cost) in enumerate([("cell-1", 0.02), ("cell-2", 0.01)])])
    from auction.services.plans import plan_create

    plan = plan_create({"changes": [{"action": "fail_zone", "zone": "z2"}], "horizon_s": 60})
    from auction.services.foundations import foundation_keep
    from auction.services.store import DbStore

    # The named foundation the documented PUT replaces and DELETE deletes.
    foundation_keep("kept-foundation", DbStore().cluster_view())
    return {"auction_id": auction_id, "plan_id": str(plan.pk)}


def _read_stream(response: Any, more: bool) -> bytes:
    """The stream's first frame (and, when ``more``, the next one), then hang up."""

    async def read() -> bytes:
        stream = response.streaming_content
        try:
            chunks = [await anext(stream)]
            if more:
                chunks.append(await anext(stream))
            return b"".join(chunks)
        finally:
            await stream.aclose()

    return async_to_sync(read)()


def _check_answer(op: dict[str, Any], status: int, answer: Any, where: tuple[Any, ...]) -> None:
    documented = op["responses"].get(str(status))
    assert documented is not None, ("undocumented status", status, *where)
    schema = documented["content"]["application/json"]["schema"]
    problems = schema_errors(answer, schema, COMPONENTS)
    assert not problems, (problems[:5], *where)


@pytest.mark.parametrize(("path", "method", "operation"), _operations(),
                         ids=[f"{m.upper()} {p}" for p, m, _ in _operations()])
def test_no_500_and_no_half_applied_write(path, method, operation, fuzz_cluster, credentials) -> None:
    client = Client()
    path_params = [p for p in DOC["paths"][path].get("parameters", []) if p["in"] == "path"]
    query = [p["name"] for p in operation.get("parameters", []) if p["in"] == "query"]
    headers = [p["name"] for p in operation.get("parameters", []) if p["in"] == "header"]
    has_body = "requestBody" in operation
    body_strategy = _body_strategy(operation) if has_body else st.just(None)
    known = st.sampled_from(KNOWN_IDS + sorted(fuzz_cluster.values()))
    path_value = st.one_of(known, text.filter(lambda s: s not in ("", ".", "..")))
    # The documented example, with the ids this run's database gave its rows.
    documented = {p["name"]: fuzz_cluster.get(p["name"], p["example"]) for p in path_params}
    documented_body = operation["requestBody"]["content"]["application/json"]["example"] if has_body else None
    killed: set[str] = set()
    seen = SEEN[(path, method.upper())]

    def check(values: dict[str, str], queries: dict[str, str], extra: dict[str, str], body: Any,
             who: str) -> None:
        url = "/api/v1" + path
        for name, value in values.items():
            url = url.replace("{" + name + "}", wire(value))
        if queries:
            url += "?" + "&".join(f"{wire(k)}={wire(v)}" for k, v in queries.items())
        writes = method != "get"
        before = fingerprint() if writes else ""
        audits = AuditEntry.objects.count()
        data = body if isinstance(body, Raw) else json.dumps(body) if body is not None else ""
        response = client.generic(method.upper(), url, data=data.encode("utf-8", "surrogatepass"),
                                  content_type="application/json",
                                  headers={**credentials[who], **extra})
        status = response.status_code
        seen.add(status)
        REQUESTS[status >= 500] += 1
        where = (who, method, url, body, extra)
        assert status < 500, (*where, response.content[:300])
        if method != "get" and who != "operator":
            # The edge refuses unstorable text before it asks who calls (bbs.md 1.5).
            edge = not all(map(storable_text, [*values.values(), *queries, *queries.values(),
                                               *extra.values()]))
            assert status in (401, 403, 404) or (edge and status == 400), (status, *where)
        if _streams(operation) and status == 200:
            assert response["Content-Type"].startswith("text/event-stream"), where
            start = extra.get("Last-Event-ID") or queries.get("after") or None
            more = (queries.get("stream", "all") == "all" and start is not None
                    and BBSEvent.objects.filter(id__gt=int(start)).exists())
            frames = _read_stream(response, more).decode()
            assert frames.startswith(": diego-web BBS events\n\n"), (frames[:200], *where)
            assert not more or "\nid: " in frames, (frames[:200], *where)
            return
        answer = json.loads(response.content)
        _check_answer(operation, status, answer, where)
        if status >= 400:
            assert not writes or fingerprint() == before, ("a refused write changed the database", *where)
            return
        if writes:
            assert AuditEntry.objects.count() == audits + 1, where
            if path.startswith("/actual_lrps/"):
                killed.add(values["process_guid"])
        assert ordinary_indices_complete(killed), where

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture])
    @given(values=st.fixed_dictionaries({p["name"]: path_value for p in path_params}),
           queries=st.fixed_dictionaries({}, optional={q: text for q in query}),
           extra=st.fixed_dictionaries({}, optional={h: text.filter(lambda v: "\n" not in v)
                                                     for h in headers}),
           body=body_strategy,
           who=st.sampled_from(["operator"] * 6 + ["anonymous", "staff"]))
    @example(values=documented, queries={}, extra={}, body=documented_body, who="operator")
    def call(values: dict[str, str], queries: dict[str, str], extra: dict[str, str], body: Any,
             who: str) -> None:
        check(values, queries, extra, body, who)

    call()
    # Then every hostile value, surely, in each path parameter, query parameter and
    # header, and each raw body: hypothesis draws them only now and then.
    plain = documented_body if has_body else None
    for value in HOSTILE:
        for name in documented:
            check({**documented, name: value}, {}, {}, plain, "operator")
        for name in query:
            check(documented, {name: value}, {}, plain, "operator")
        for name in headers:
            check(documented, {}, {name: value}, plain, "operator")
    if has_body:
        for raw in RAW_LIST:
            check(documented, {}, {}, raw, "operator")
    assert any(200 <= s < 300 for s in seen), f"{method.upper()} {path} never succeeded: {sorted(seen)}"


ALL_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def test_every_path_and_every_method_answers_json_below_500(fuzz_cluster, credentials) -> None:
    """bbs.md 1.5: every path of the document with every HTTP method, documented or not,
    each path value and body hostile in turn: below 500, and an error is the BBS shape."""
    client = Client()
    for path, item in DOC["paths"].items():
        names = [p["name"] for p in item.get("parameters", []) if p["in"] == "path"]
        for method in ALL_METHODS:
            for hostile in ["", *HOSTILE[:6]]:
                url = "/api/v1" + path
                for name in names:
                    url = url.replace("{" + name + "}", wire(hostile or "lrp-a"))
                if path == "/events" and method in ("GET", "HEAD"):
                    continue  # a stream: the fuzz above reads and closes it
                body = Raw("[" * 3000) if hostile == "" else json.dumps({"x": hostile})
                response = client.generic(method, url, data=body.encode("utf-8", "surrogatepass"),
                                          content_type="application/json",
                                          headers=credentials["operator"])
                REQUESTS[response.status_code >= 500] += 1
                where = (method, url, body[:40])
                assert response.status_code < 500, (*where, response.content[:300])
                if response.status_code >= 400 and method != "HEAD":
                    problems = schema_errors(json.loads(response.content), {"$ref": "#/components/schemas/Error"},
                                             COMPONENTS)
                    assert not problems, (problems, *where)


def test_the_fuzz_reached_every_operation_of_the_document(request: pytest.FixtureRequest) -> None:
    """The fuzz above (same module, so it ran first) sent requests to every operation of
    the document, and each answered at least one success."""
    assert {(p, m.upper()) for p, m, _ in _operations()} == documented_operations(DOC)
    selected = {(item.callspec.params["path"], item.callspec.params["method"].upper())
                for item in request.session.items
                if getattr(item, "originalname", "") == "test_no_500_and_no_half_applied_write"}
    if selected != documented_operations(DOC):
        pytest.skip("only part of the fuzz was selected")
    assert set(SEEN) == documented_operations(DOC)
    print(f"API fuzz: {sum(REQUESTS)} requests, {REQUESTS[1]} answered 5xx")
    assert REQUESTS[0] > 0 and REQUESTS[1] == 0
    assert all(any(200 <= s < 300 for s in statuses) for statuses in SEEN.values()), dict(SEEN)

