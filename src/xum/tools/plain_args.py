"""Tool arguments checked without pydantic, for input models plain enough to check by hand.

Importing pydantic costs 70-90 ms, which the first tool call of a process paid (the tool
prewarm thread rarely finishes before a fast reply). For an input model with only plain fields
(str, int, float, bool, list[str], each optionally `| None`), the numeric and length limits of
annotated_types and no validators of its own, `xum.tools.schemas` writes a field spec into
`schemas.json` ("plain"); `check` takes arguments that obviously satisfy it and returns them as
attributes, the same values pydantic's model would hold.

Anything `check` does not plainly accept (a wrong type, a missing field, an unknown one, a
value pydantic would coerce such as "5" for an int, a broken limit) returns None, and the
caller validates with pydantic as before: every error message comes from pydantic, unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

# JSON type -> the Python types pydantic keeps as they are (bool is not an int here).
_EXACT: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
}
# Beyond 2**53 an int may not survive float(); pydantic decides those.
_FLOAT_SAFE = 2**53


class PlainArgs(SimpleNamespace):
    """A tool's checked arguments as attributes (what its pydantic model would hold)."""


def check(spec: Mapping[str, Mapping[str, Any]], arguments: Mapping[str, Any]) -> PlainArgs | None:
    """`arguments` as PlainArgs when they plainly satisfy `spec`; None: let pydantic decide."""
    for name in arguments:
        if name not in spec:
            return None
    values: dict[str, Any] = {}
    for name, field in spec.items():
        if name not in arguments:
            if field.get("required"):
                return None
            values[name] = None  # optional fields are `T | None = None` (xum.tools.schemas)
            continue
        value = _value(field, arguments[name])
        if value is _REFUSED:
            return None
        values[name] = value
    return PlainArgs(**values)


_REFUSED = object()


def _value(field: Mapping[str, Any], value: Any) -> Any:
    if value is None:
        return None if field.get("nullable") else _REFUSED
    kind = field["type"]
    if kind not in _EXACT or type(value) not in _EXACT[kind]:  # "object": only null is plain
        return _REFUSED
    if kind == "number":
        if type(value) is int and abs(value) > _FLOAT_SAFE:
            return _REFUSED
        value = float(value)
    elif kind == "array":
        if any(type(item) is not str for item in value):
            return _REFUSED
        value = list(value)
    return value if _within(field, value) else _REFUSED


def _within(field: Mapping[str, Any], value: Any) -> bool:
    size = len(value) if isinstance(value, str | list) else None
    for limit, bound in field.get("limits", {}).items():
        if limit == "min_length":
            ok = size is not None and size >= bound
        elif limit == "max_length":
            ok = size is not None and size <= bound
        elif limit == "gt":
            ok = value > bound
        elif limit == "ge":
            ok = value >= bound
        elif limit == "lt":
            ok = value < bound
        elif limit == "le":
            ok = value <= bound
        else:  # a limit this module does not know: pydantic checks it
            ok = False
        if not ok:
            return False
    return True
