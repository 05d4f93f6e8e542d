"""A JSON Schema of the engine's events, generated from their classes (`xum.engine.events`).

    python -m xum.testing.event_schema [PATH]      (`make event-schema`)

writes it to PATH (default: web/src/api/events.schema.json, committed), so the web UI's
hand-written types (web/src/api/types.ts) have a generated reference to be checked against:
tests/unit/test_event_schema.py fails when the committed schema is stale or when types.ts lacks
an event or one of its fields.

Each event is an object with a constant `type`. A field is required when `to_dict()` always
writes it: its value cannot be None, or None is written as null (`_keep_none`). Any other field
that may be None is left out when it is, so it is optional and never null.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any, ClassVar, Union, get_args, get_origin, get_type_hints

from xum.engine import events as E

DEFAULT_PATH = Path(__file__).resolve().parents[3] / "web" / "src" / "api" / "events.schema.json"
SCHEMA_ID = "https://xum.dev/schemas/events.schema.json"

_SCALARS: dict[object, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
}


def type_schema(hint: object) -> dict[str, Any]:
    """The JSON Schema of one field's annotation."""
    if hint is Any:
        return {}
    if hint in _SCALARS:
        return dict(_SCALARS[hint])
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return {"anyOf": [type_schema(arg) for arg in get_args(hint)]}
    if origin is list:
        (item,) = get_args(hint)
        return {"type": "array", "items": type_schema(item)}
    if origin is dict or hint is dict:
        return {"type": "object"}
    raise TypeError(f"no JSON Schema for the annotation {hint!r}: teach event_schema.py")


def fields(cls: type[E.Event]) -> dict[str, object]:
    """The event's fields (in declaration order, base classes first) and their annotations."""
    hints = get_type_hints(cls, vars(E))
    return {
        name: hints[name]
        for name in cls._fields
        if get_origin(hints[name]) is not ClassVar  # type, _keep_none, ...: not serialized
    }


# Fields a class's own to_dict() writes as null in some cases although they are optional.
_NULL_WHEN_WRITTEN = {("turn-end", "cost_usd")}  # TurnEnd: null cost beside a known usage


def _nullable(hint: object) -> bool:
    return get_origin(hint) in (Union, types.UnionType) and type(None) in get_args(hint)


def _without_none(hint: object) -> object:
    rest = tuple(arg for arg in get_args(hint) if arg is not type(None))
    return rest[0] if len(rest) == 1 else Union[rest]  # noqa: UP007 (built from a tuple)


def event_schema(cls: type[E.Event]) -> dict[str, Any]:
    properties: dict[str, Any] = {"type": {"const": cls.type}}
    required = ["type"]
    for name, hint in fields(cls).items():
        if not _nullable(hint) or name in cls._keep_none:
            properties[name] = type_schema(hint)
            required.append(name)
        elif (cls.type, name) in _NULL_WHEN_WRITTEN:
            properties[name] = type_schema(hint)
        else:
            properties[name] = type_schema(_without_none(hint))
    out: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    doc = (cls.__doc__ or "").strip()
    if doc and cls.__doc__ != E.Event.__doc__ and cls.__doc__ != E.Committed.__doc__:
        out["description"] = " ".join(doc.split())
    if issubclass(cls, E.Committed):
        out["x-committed"] = True  # stands for a frame of the session log: has seq and ts
    return out


def schema() -> dict[str, Any]:
    """The schema of every event type, by class name, and `oneOf` them."""
    classes = sorted(E.event_types().values(), key=lambda c: c.type)
    defs = {cls.__name__: event_schema(cls) for cls in classes}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "xum engine events",
        "description": "Generated from xum.engine.events by `make event-schema`; do not edit.",
        "oneOf": [{"$ref": f"#/$defs/{name}"} for name in defs],
        "$defs": defs,
    }


def render() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else DEFAULT_PATH
    path.write_text(render())
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
