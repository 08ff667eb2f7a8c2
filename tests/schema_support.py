"""JSON Schema validation for the tests: ``jsonschema`` where the environment has it, else a
small validator of the keywords the shipped schemas use (type, const, enum, required,
properties, additionalProperties, items, maxItems). The small one is checked against
``jsonschema``'s verdicts in tests/test_summary_formats.py whenever both are there."""

from __future__ import annotations

from typing import Any

_TYPES = {"object": dict, "array": list, "string": str, "integer": int, "number": (int, float), "boolean": bool,
          "null": type(None)}


def _is(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[kind])


def errors(instance: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Every violation of ``schema`` by ``instance``, as 'path: what' lines ([] when valid)."""
    out: list[str] = []
    kinds = schema.get("type")
    if kinds is not None and not any(_is(instance, k) for k in ([kinds] if isinstance(kinds, str) else kinds)):
        return [f"{path}: {type(instance).__name__} is not {kinds}"]
    if "const" in schema and instance != schema["const"]:
        out.append(f"{path}: {instance!r} != {schema['const']!r}")
    if "enum" in schema and instance not in schema["enum"]:
        out.append(f"{path}: {instance!r} not in {schema['enum']}")
    if isinstance(instance, dict):
        out += [f"{path}: lacks {k!r}" for k in schema.get("required", []) if k not in instance]
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for k, v in instance.items():
            if k in props:
                out += errors(v, props[k], f"{path}.{k}")
            elif extra is False:
                out.append(f"{path}: unexpected key {k!r}")
            elif isinstance(extra, dict):
                out += errors(v, extra, f"{path}.{k}")
    if isinstance(instance, list):
        if "maxItems" in schema and len(instance) > schema["maxItems"]:
            out.append(f"{path}: {len(instance)} items, above {schema['maxItems']}")
        if "items" in schema:
            for i, v in enumerate(instance):
                out += errors(v, schema["items"], f"{path}[{i}]")
    return out


def validate(instance: Any, schema: dict[str, Any]) -> None:
    """Raise AssertionError listing the violations (``jsonschema`` when installed)."""
    try:
        import jsonschema
    except ImportError:
        found = errors(instance, schema)
        assert not found, "\n".join(found[:20])
        return
    jsonschema.validate(instance, schema)
