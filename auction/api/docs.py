"""``/api/v1/docs/``: the API reference, drawn on the server from the OpenAPI document.

The page reads the very document ``/api/v1/openapi.json`` serves (``openapi.document``),
so it cannot disagree with it; nothing is fetched from elsewhere (no CDN, no script): a
newcomer reads each operation's summary, parameters, body and answers, and the schemas
they name, with links between them.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from auction.api.openapi import HTTP_METHODS, document


def _schema_name(schema: dict[str, Any]) -> str:
    ref = schema.get("$ref", "")
    return ref.rsplit("/", 1)[-1] if ref else ""


def _content_schema(part: dict[str, Any]) -> tuple[str, str]:
    """(schema name, or the inline schema as JSON) of a body or an answer."""
    schema = part.get("content", {}).get("application/json", {}).get("schema", {})
    name = _schema_name(schema)
    return name, "" if name or not schema else json.dumps(schema, indent=1)


def operations(doc: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for path, item in doc["paths"].items():
        shared = item.get("parameters", [])
        for method, op in item.items():
            if method not in HTTP_METHODS:
                continue
            params = [{"name": p["name"], "where": p["in"], "required": p.get("required", False),
                       "type": p.get("schema", {}).get("type", ""),
                       "about": p.get("description", ""),
                       "example": p.get("example", "")} for p in [*shared, *op.get("parameters", [])]]
            body = op.get("requestBody")
            body_name, body_inline = _content_schema(body) if body else ("", "")
            example = ""
            if body:
                raw = body.get("content", {}).get("application/json", {}).get("example")
                example = json.dumps(raw, indent=1) if raw is not None else ""
            answers = []
            for status, answer in op.get("responses", {}).items():
                name, inline = _content_schema(answer)
                answers.append({"status": status, "about": answer.get("description", ""),
                                "schema": name, "inline": inline})
            out.append({"method": method.upper(), "path": path, "id": op.get("operationId", ""),
                        "summary": op.get("summary", ""), "about": op.get("description", ""),
                        "secured": bool(op.get("security")), "params": params,
                        "body": body_name, "body_inline": body_inline, "example": example,
                        "answers": answers})
    return out


def api_docs(request: HttpRequest) -> HttpResponse:
    doc = document()
    schemas = [{"name": name, "json": json.dumps(schema, indent=1)}
               for name, schema in sorted(doc.get("components", {}).get("schemas", {}).items())]
    return render(request, "api/docs.html", {
        "info": doc.get("info", {}), "operations": operations(doc), "schemas": schemas,
        "page": "api-docs"})
