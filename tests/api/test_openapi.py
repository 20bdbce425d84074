"""The OpenAPI document is complete: exactly the routed operations, each described.

A new route in auction/api/urls.py without an operation in auction/api/openapi.py (or
an operation left behind after its route went) fails here; the fuzz test then checks
every answer against these schemas.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client

from auction.api.openapi import HTTP_METHODS, document, documented_operations, routed_operations
from tests.api.json_schema import errors, walk

DOC = document()
COMPONENTS = DOC["components"]["schemas"]


def _operations() -> list[tuple[str, str, dict]]:
    return [(path, method, op) for path, item in DOC["paths"].items()
            for method, op in item.items() if method in HTTP_METHODS]


def test_the_document_has_exactly_the_routed_operations() -> None:
    routed, documented = routed_operations(), documented_operations(DOC)
    assert routed - documented == set(), "routed but not documented"
    assert documented - routed == set(), "documented but not routed"
    assert ("/open_auctions", "GET") in documented and ("/auctions/{auction_id}", "GET") in documented


def test_every_operation_is_described_and_typed() -> None:
    ids = [op["operationId"] for _, _, op in _operations()]
    assert len(ids) == len(set(ids)), "operationIds are unique"
    for path, method, op in _operations():
        where = f"{method.upper()} {path}"
        assert op.get("summary", "").strip(), f"{where}: no summary"
        successes = [code for code in op["responses"] if code.startswith("2")]
        assert successes, f"{where}: no success response"
        for code, answer in op["responses"].items():
            assert answer.get("description"), f"{where} {code}: no description"
            [(media, body)] = answer["content"].items()
            schema = body["schema"]
            walk(schema, COMPONENTS, f"{where} {code}")
            if code.startswith("4"):
                assert (media, schema) == ("application/json", {"$ref": "#/components/schemas/Error"}), where
            elif media == "application/json" and path != "/openapi.json":
                resolved = COMPONENTS[schema["$ref"].rsplit("/", 1)[1]] if "$ref" in schema else schema
                assert resolved["type"] == "object" and "properties" in resolved, (
                    f"{where} {code}: the body's members are not typed")
        if op.get("security"):
            assert {"401", "403", "400"} <= set(op["responses"]), f"{where}: write without its refusals"
        declared = [p for p in DOC["paths"][path].get("parameters", []) if p["in"] == "path"]
        assert {p["name"] for p in declared} == set(path.replace("}", "{").split("{")[1::2]), (
            f"{where}: path parameters")
        assert all(p.get("example") for p in declared), f"{where}: a path parameter without an example"
        if "requestBody" in op:
            body = op["requestBody"]["content"]["application/json"]
            assert "example" in body, f"{where}: a body without an example (the fuzz sends it first)"
            assert errors(body["example"], body["schema"], COMPONENTS) == [], where


def test_component_schemas_use_only_checked_keywords() -> None:
    for name, schema in COMPONENTS.items():
        walk(schema, COMPONENTS, name)


def test_routed_operations_reads_every_view(monkeypatch: pytest.MonkeyPatch) -> None:
    """A view that names no methods cannot hide from the comparison."""
    from django.urls import path

    from auction.api import urls

    monkeypatch.setattr(urls, "urlpatterns", [path("new", lambda request: None), *urls.urlpatterns])
    with pytest.raises(AssertionError, match="/new: its view names no methods"):
        routed_operations()


def test_served_document_is_the_built_one() -> None:
    response = Client().get("/api/v1/openapi.json")
    assert response.status_code == 200 and json.loads(response.content) == json.loads(json.dumps(DOC))


@pytest.mark.django_db
def test_a_running_cluster_answers_as_documented(cluster) -> None:  # type: ignore[no-untyped-def]
    """The fuzz reads a cluster at sim time 0; here 31 sim-s on: instances RUNNING with
    ports and addresses, tasks RUNNING, a convergence pass's metrics, cells in use."""
    from auction.selectors.clock import sim_now
    from auction.services.clock import clock_step
    from auction.services.lrps import desired_lrp_desire
    from auction.services.sim import auctioneer_run, sim_advance

    # The documented example (ports [8080]), so RUNNING rows carry ports.
    desired_lrp_desire(DOC["paths"]["/desired_lrps"]["post"]["requestBody"]["content"]
                       ["application/json"]["example"])
    while (now := sim_now()) < 31 - 1e-9:
        clock_step(min(1.0, 31 - now))
        sim_advance()
        auctioneer_run()
    client = Client()
    reads = {"/actual_lrps": "actual_lrps", "/tasks": "tasks", "/metrics": "at",
             "/cells": "cells", "/desired_lrps": "desired_lrps", "/domains": "all", "/clock": "clock"}
    for path, member in reads.items():
        response = client.get(f"/api/v1{path}")
        body = json.loads(response.content)
        assert response.status_code == 200 and body[member], path
        schema = DOC["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        assert errors(body, schema, COMPONENTS) == [], path
    running = json.loads(client.get("/api/v1/actual_lrps?state=RUNNING").content)["actual_lrps"]
    assert running and all(row["address"] for row in running)
    assert any(row["ports"] for row in running if row["process_guid"] == "web")
