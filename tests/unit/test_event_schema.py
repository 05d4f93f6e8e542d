"""The web UI's event types agree with the engine: web/src/api/events.schema.json is what
`make event-schema` generates from `xum.engine.events` today, and web/src/api/types.ts has an
interface for every event with every one of its fields."""

from __future__ import annotations

import json
import re
from pathlib import Path

from xum.testing import event_schema

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "web" / "src" / "api" / "events.schema.json"
TYPES_TS = ROOT / "web" / "src" / "api" / "types.ts"

# `export interface Name extends A, B {` ... the `}` that closes it at the start of a line.
INTERFACE = re.compile(
    r"^(?:export )?interface (\w+)(?: extends ([\w, ]+))? \{\n(.*?)^\}", re.M | re.S
)
# A field at the interface's top level (two spaces in): `name: ...` or `name?: ...`.
FIELD = re.compile(r"^  (\w+)\??:", re.M)
TYPE_LITERAL = re.compile(r'^  type: "([\w-]+)";', re.M)


def interfaces(source: str) -> dict[str, tuple[list[str], set[str], str | None]]:
    """Each interface of a TypeScript file: (what it extends, its own fields, its `type`)."""
    found = {}
    for name, extends, body in INTERFACE.findall(source):
        bases = [b.strip() for b in extends.split(",")] if extends else []
        literal = TYPE_LITERAL.search(body)
        found[name] = (bases, set(FIELD.findall(body)), literal[1] if literal else None)
    return found


def fields_by_event_type(source: str) -> dict[str, set[str]]:
    """For each `type: "<event>"` interface, its fields, inherited ones included."""
    known = interfaces(source)

    def all_fields(name: str) -> set[str]:
        bases, own, _ = known.get(name, ([], set(), None))
        return own.union(*(all_fields(base) for base in bases))

    return {literal: all_fields(name) for name, (_, _, literal) in known.items() if literal}


def test_the_committed_schema_is_what_the_event_classes_generate() -> None:
    assert SCHEMA.read_text() == event_schema.render(), (
        "web/src/api/events.schema.json is stale: run `make event-schema` and commit it"
    )


def test_types_ts_has_every_event_and_every_field() -> None:
    in_ts = fields_by_event_type(TYPES_TS.read_text())
    missing: list[str] = []
    for name, definition in json.loads(SCHEMA.read_text())["$defs"].items():
        event_type = definition["properties"]["type"]["const"]
        if event_type not in in_ts:
            missing.append(f'{event_type} ({name}): no interface with type: "{event_type}"')
            continue
        lacking = sorted(set(definition["properties"]) - in_ts[event_type])
        if lacking:
            missing.append(f"{event_type}: lacks {', '.join(lacking)}")
    assert not missing, "web/src/api/types.ts disagrees with the engine:\n" + "\n".join(missing)


def test_the_parser_sees_fields_through_extends_and_misses_nothing_else() -> None:
    source = (
        "interface Base {\n  seq: number;\n  ts?: number;\n}\n"
        'export interface ThingEvent extends Base {\n  type: "thing";\n  /** a note */\n'
        "  name: string;\n  nested: { inner: number };\n}\n"
    )
    assert fields_by_event_type(source) == {"thing": {"type", "seq", "ts", "name", "nested"}}
