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
from pathlib import Path
from typing import Any

import orjson

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


def tool_entry(cls: type[Tool]) -> dict[str, Any]:
    return {
        "name": cls.name,
        "description": cls.description,
        "read_only": cls.read_only,
        "risk": cls.risk,
        "parameters": strict_schema(cls.Input),
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
