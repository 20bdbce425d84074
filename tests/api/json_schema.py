"""A validator for the JSON Schema subset the OpenAPI document uses.

Small on purpose: it knows exactly the keywords below and refuses a schema that uses
any other (``KeywordUnknown``), so the document cannot grow a constraint the tests
silently skip.
"""

from __future__ import annotations

from typing import Any

ANNOTATIONS = {"description"}
KEYWORDS = {"type", "properties", "required", "additionalProperties", "items", "enum", "$ref",
            "oneOf", "maxLength", "maxItems", "minimum", "maximum"} | ANNOTATIONS


class KeywordUnknown(AssertionError):
    pass


def _is(kind: str, value: Any) -> bool:
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    raise KeywordUnknown(f"type {kind!r}")


def errors(value: Any, schema: dict[str, Any], components: dict[str, Any],
           at: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema`` (empty: it is valid)."""
    unknown = set(schema) - KEYWORDS
    if unknown:
        raise KeywordUnknown(f"{at}: {sorted(unknown)}")
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/components/schemas/")
        return errors(value, components[name], components, at)
    found: list[str] = []
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is(k, value) for k in kinds):
            return [f"{at}: {value!r:.80} is not {' or '.join(kinds)}"]
    if "oneOf" in schema:
        matching = [s for s in schema["oneOf"] if not errors(value, s, components, at)]
        if len(matching) != 1:
            found.append(f"{at}: {value!r:.80} matches {len(matching)} of oneOf")
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{at}: {value!r:.80} not in {schema['enum']}")
    if isinstance(value, list) and "maxItems" in schema and len(value) > schema["maxItems"]:
        found.append(f"{at}: more than {schema['maxItems']} items")
    if isinstance(value, str) and "maxLength" in schema and len(value) > schema["maxLength"]:
        found.append(f"{at}: longer than {schema['maxLength']}")
    if _is("number", value):
        if "minimum" in schema and value < schema["minimum"]:
            found.append(f"{at}: {value} < {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            found.append(f"{at}: {value} > {schema['maximum']}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            found += errors(item, schema["items"], components, f"{at}[{i}]")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        found += [f"{at}: missing {name}" for name in schema.get("required", []) if name not in value]
        extra = schema.get("additionalProperties", True)
        for name, member in value.items():
            if name in properties:
                found += errors(member, properties[name], components, f"{at}.{name}")
            elif extra is False:
                found.append(f"{at}: unexpected member {name}")
            elif isinstance(extra, dict):
                found += errors(member, extra, components, f"{at}.{name}")
    return found


def walk(schema: Any, components: dict[str, Any], at: str = "$") -> None:
    """Refuse any keyword the validator does not check, anywhere in ``schema``."""
    if not isinstance(schema, dict):
        return
    unknown = set(schema) - KEYWORDS
    if unknown:
        raise KeywordUnknown(f"{at}: {sorted(unknown)}")
    if "$ref" in schema:
        assert schema["$ref"].removeprefix("#/components/schemas/") in components, schema["$ref"]
    for name, sub in schema.get("properties", {}).items():
        walk(sub, components, f"{at}.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            walk(schema[key], components, f"{at}.{key}")
    for i, sub in enumerate(schema.get("oneOf", [])):
        walk(sub, components, f"{at}.oneOf[{i}]")
