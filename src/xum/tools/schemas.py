"""Generate `schemas.json`: every tool's name, description and strict-mode JSON Schema.

The registry reads the generated file instead of importing pydantic and every tool module at
start-up (tens of milliseconds of cold start). A test regenerates it and fails when the
committed file is stale:

    python -m xum.tools.schemas --write    # regenerate
    python -m xum.tools.schemas --check    # exit 1 when stale

The schemas are shaped for OpenAI strict mode, which the other providers also accept: every
object lists all its properties in `required` and sets `additionalProperties: false`; optional
inputs are nullable (`anyOf [T, null]`, null meaning "use the default"); `$defs` are inlined;
titles, defaults and numeric/string constraints are dropped (constraints live in the
descriptions and are enforced when the arguments are validated). The one open object is a typed
map (`dict[str, str]`: mcp_prompt_get's `arguments`, whose keys an MCP server names), which keeps
its value schema; xum sends tools with strict mode off, so every provider accepts it.
"""

from __future__ import annotations

import argparse
import sys
import types
from pathlib import Path
from typing import Any, Union, get_args, get_origin

import annotated_types
import orjson
from pydantic import BaseModel

from xum.tools.base import Tool
from xum.tools.input import ToolInput
from xum.tools.registry import SCHEMAS_PATH, tool_class, tool_names

_KEEP = ("type", "description", "enum", "const", "properties", "items", "anyOf")


class SchemaError(Exception):
    pass


def strict_schema(model: type[ToolInput]) -> dict[str, Any]:
    raw = model.model_json_schema()
    defs: dict[str, Any] = raw.get("$defs", {})
    _check_optional_fields_are_nullable(model, raw)
    return _convert(raw, defs)


def _check_optional_fields_are_nullable(model: type[ToolInput], raw: dict[str, Any]) -> None:
    required = set(raw.get("required", []))
    for name, prop in raw.get("properties", {}).items():
        if name in required:
            continue
        types = [branch.get("type") for branch in prop.get("anyOf", [])]
        if "null" not in types or prop.get("default", "missing") is not None:
            raise SchemaError(
                f"{model.__name__}.{name} is optional but not `T | None = None`; strict mode "
                "sends every field, so an optional field must accept null as its default"
            )


def _convert(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _convert(merged, defs)
    out: dict[str, Any] = {}
    for key in _KEEP:
        if key not in node:
            continue
        value = node[key]
        if key == "properties":
            out[key] = {name: _convert(prop, defs) for name, prop in value.items()}
        elif key == "items":
            out[key] = _convert(value, defs)
        elif key == "anyOf":
            out[key] = [_convert(branch, defs) for branch in value]
        else:
            out[key] = value
    if node.get("type") == "object" or "properties" in node:
        out["type"] = "object"
        out.setdefault("properties", {})
        out["required"] = list(out["properties"])
        extra = node.get("additionalProperties")
        # A map (`dict[str, str]`) keeps its value schema: its keys are the caller's to name.
        out["additionalProperties"] = _convert(extra, defs) if isinstance(extra, dict) else False
    return out


# A field's annotation -> (JSON type, nullable) for the fields `xum.tools.plain_args` checks.
_PLAIN: dict[Any, tuple[str, bool]] = {}
for _kind, _name in ((str, "string"), (int, "integer"), (float, "number"), (bool, "boolean")):
    _PLAIN[_kind] = (_name, False)
    _PLAIN[_kind | None] = (_name, True)
_PLAIN[list[str]] = ("array", False)
_PLAIN[list[str] | None] = ("array", True)
_LIMITS = {
    annotated_types.Gt: "gt",
    annotated_types.Ge: "ge",
    annotated_types.Lt: "lt",
    annotated_types.Le: "le",
    annotated_types.MinLen: "min_length",
    annotated_types.MaxLen: "max_length",
}


def plain_spec(model: type[ToolInput]) -> dict[str, Any] | None:
    """The field spec `xum.tools.plain_args` checks arguments against without pydantic, or
    None when the model is more than plain fields and limits (a validator, another type, an
    alias, other config): pydantic alone validates those."""
    decorators = model.__pydantic_decorators__
    if (
        decorators.validators
        or decorators.field_validators
        or decorators.root_validators
        or decorators.model_validators
        or dict(model.model_config) != {"extra": "forbid"}
        or _own_members(model)
    ):
        return None
    spec: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        plain = _PLAIN.get(_normalized(field.annotation))
        if plain is None and _optional_model(field.annotation) and field.default is None:
            # An optional nested model (bash's `monitor`): checked plainly only when absent or
            # null; a value goes to pydantic.
            spec[name] = {"type": "object", "nullable": True}
            continue
        if plain is None or field.alias is not None or field.validation_alias is not None:
            return None
        if not field.is_required() and field.default is not None:
            return None
        limits: dict[str, Any] = {}
        for item in field.metadata:
            key = _LIMITS.get(type(item))
            if key is None:
                return None
            limits[key] = getattr(item, key)
        entry: dict[str, Any] = {"type": plain[0]}
        if plain[1]:
            entry["nullable"] = True
        if field.is_required():
            entry["required"] = True
        if limits:
            entry["limits"] = limits
        spec[name] = entry
    return spec


def _optional_model(annotation: Any) -> bool:
    """`Model | None` for a pydantic model."""
    args = get_args(annotation)
    return (
        len(args) == 2
        and type(None) in args
        and any(isinstance(a, type) and issubclass(a, BaseModel) for a in args)
    )


def _own_members(model: type[ToolInput]) -> list[str]:
    """Methods and properties a model adds to its fields: a plain call's arguments (attributes
    only) would lack them."""
    members: list[str] = []
    for cls in model.__mro__:
        if cls is ToolInput or not issubclass(cls, ToolInput):
            break
        members += [
            name
            for name in vars(cls)
            if not name.startswith(("__", "_abc"))
            and name not in model.model_fields
            and name != "model_config"
        ]
    return members


def _normalized(annotation: Any) -> Any:
    """`Optional[T]` and `T | None` compare equal to one key."""
    if get_origin(annotation) is Union:
        return _union(get_args(annotation))
    return annotation


def _union(members: tuple[Any, ...]) -> Any:
    out: Any = members[0]
    for member in members[1:]:
        out = out | member
    return out if isinstance(out, types.UnionType) else None


def tool_entry(cls: type[Tool]) -> dict[str, Any]:
    return {
        "name": cls.name,
        "description": cls.description,
        "read_only": cls.read_only,
        "risk": cls.risk,
        "parameters": strict_schema(cls.Input),
        "plain": plain_spec(cls.Input),
    }


def build_schemas() -> list[dict[str, Any]]:
    entries = []
    for name in tool_names():
        cls = tool_class(name)
        if cls.name != name:
            raise SchemaError(f"registry name {name!r} maps to a tool named {cls.name!r}")
        entries.append(tool_entry(cls))
    return entries


def render(entries: list[dict[str, Any]]) -> bytes:
    return orjson.dumps(entries, option=orjson.OPT_INDENT_2) + b"\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m xum.tools.schemas")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help=f"regenerate {SCHEMAS_PATH.name}")
    mode.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    args = parser.parse_args(argv)
    fresh = render(build_schemas())
    current = SCHEMAS_PATH.read_bytes() if SCHEMAS_PATH.exists() else b""
    if args.check:
        if fresh != current:
            print(f"{SCHEMAS_PATH} is stale; run: python -m xum.tools.schemas --write")
            return 1
        return 0
    if fresh != current:
        Path(SCHEMAS_PATH).write_bytes(fresh)
        print(f"wrote {SCHEMAS_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
