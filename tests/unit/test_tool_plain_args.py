"""Plain tool arguments (xum.tools.plain_args): well-formed calls to tools with plain input models
run without pydantic, and whatever the plain check accepts, pydantic accepts with the same
values; everything else still goes to pydantic, so the error messages are pydantic's."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from tests.support.tools import make_ctx
from xum.tools.plain_args import check
from xum.tools.registry import SCHEMAS_PATH, tool_class, validate_and_run

# Values of every JSON shape, with the edges of the limits the plain models use.
SAMPLES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    255,
    256,
    2**60,
    0.0,
    0.5,
    1.0,
    3.7,
    "",
    "x",
    "5",
    "true",
    "a" * 500,
    "a" * 501,
    [],
    ["a", "b"],
    ["a", 1],
    [None],
    {},
    {"k": "v"},
]


def _plain_tools() -> list[tuple[str, dict[str, Any]]]:
    entries = orjson.loads(SCHEMAS_PATH.read_bytes())
    return [(e["name"], e["plain"]) for e in entries if e["plain"] is not None]


def _agree(name: str, spec: dict[str, Any], arguments: dict[str, Any]) -> None:
    model = tool_class(name).Input
    plain = check(spec, arguments)
    try:
        validated = model.model_validate(arguments)
    except ValidationError:
        assert plain is None, (name, arguments)
        return
    if plain is not None:
        assert vars(plain) == validated.model_dump(), (name, arguments)
        for field, value in vars(plain).items():
            assert type(value) is type(getattr(validated, field)), (name, field, value)


def test_the_hot_tools_have_plain_models() -> None:
    plain = dict(_plain_tools())
    assert {"bash", "file_read", "file_edit_replace_lines", "file_edit_insert"} <= set(plain)
    # A model with a validator of its own is left to pydantic.
    assert "file_edit_replace_string" not in plain


def test_whatever_the_plain_check_accepts_pydantic_accepts_with_the_same_values() -> None:
    checked = 0
    for name, spec in _plain_tools():
        fields = list(spec)
        base = {f: _valid_value(spec[f]) for f in fields}
        _agree(name, spec, base)
        _agree(name, spec, {f: v for f, v in base.items() if spec[f].get("required")})
        _agree(name, spec, {**base, "unknown": 1})
        for field in fields:
            _agree(name, spec, {k: v for k, v in base.items() if k != field})
            for value in SAMPLES:
                _agree(name, spec, {**base, field: value})
                checked += 1
        for first, second in itertools.combinations(fields[:3], 2):
            for a, b in itertools.product(SAMPLES[:8], repeat=2):
                _agree(name, spec, {**base, first: a, second: b})
    assert checked > 500


def test_plain_arguments_are_checked_and_coercions_are_left_to_pydantic() -> None:
    spec = orjson.loads(SCHEMAS_PATH.read_bytes())[0]["plain"]  # bash
    args = check(spec, {"script": "ls", "display_name": "list", "timeout_secs": 5})
    assert args is not None
    assert (args.script, args.timeout_secs, args.run_in_background) == ("ls", 5.0, None)
    assert type(args.timeout_secs) is float
    # pydantic would coerce or refuse these: the plain check does neither.
    assert check(spec, {"script": "ls", "display_name": "list", "timeout_secs": "5"}) is None
    assert check(spec, {"script": "ls", "display_name": "list", "timeout_secs": 0}) is None
    assert check(spec, {"script": "ls", "display_name": "list", "run_in_background": 1}) is None
    assert check(spec, {"script": "ls"}) is None
    assert (
        check(spec, {"script": "ls", "display_name": "x", "sandbox_escalation": "a" * 501}) is None
    )


async def test_invalid_calls_keep_pydantics_messages(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    result = await validate_and_run(
        "bash", '{"script": "ls", "display_name": "l", "timeout_secs": 0}', ctx
    )
    assert result.is_error
    assert result.output.splitlines()[:2] == [
        "Invalid arguments for bash:",
        "- timeout_secs: Input should be greater than 0 (got 0)",
    ]
    coerced = await validate_and_run("bash", '{"script": "echo hi", "display_name": 5}', ctx)
    assert coerced.output.splitlines()[1] == (
        "- display_name: Input should be a valid string (got 5)"
    )


def test_a_plain_bash_call_runs_without_pydantic(tmp_path: Path) -> None:
    code = (
        "import asyncio, sys\n"
        "from tests.support.tools import make_ctx\n"
        "from xum.tools.registry import validate_and_run\n"
        "from pathlib import Path\n"
        "ctx = make_ctx(Path(sys.argv[1]))\n"
        'args = \'{"script": "echo ran", "display_name": "echo", "timeout_secs": 30}\'\n'
        "result = asyncio.run(validate_and_run('bash', args, ctx))\n"
        "print(result.output.splitlines()[0], 'pydantic' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.stdout.split() == ["ran", "False"]


def _valid_value(field: dict[str, Any]) -> Any:
    kind = field["type"]
    if kind == "array":
        return ["a"]
    if kind == "object":  # an optional nested model: only its absence is plain
        return None
    limits = field.get("limits", {})
    if kind in ("integer", "number"):
        low = limits.get("ge", limits.get("gt", 0))
        return int(low) + 1
    return {"string": "x", "boolean": True}[kind]


def test_a_model_with_its_own_methods_or_validators_is_not_plain() -> None:
    from pydantic import field_validator

    from xum.tools.input import ToolInput
    from xum.tools.schemas import plain_spec

    class Plain(ToolInput):
        name: str
        count: int | None = None

    class WithProperty(Plain):
        @property
        def shown(self) -> str:
            return self.name.upper()

    class WithValidator(ToolInput):
        name: str

        @field_validator("name")
        @classmethod
        def _not_blank(cls, value: str) -> str:
            return value

    assert plain_spec(Plain) == {
        "name": {"type": "string", "required": True},
        "count": {"type": "integer", "nullable": True},
    }
    assert plain_spec(WithProperty) is None
    assert plain_spec(WithValidator) is None


def test_an_optional_nested_model_is_plain_only_when_absent() -> None:
    """bash's `monitor` is a model of its own: a call without one stays off pydantic, a call with
    one is pydantic's to validate."""
    bash = dict(_plain_tools())["bash"]
    assert bash["monitor"] == {"type": "object", "nullable": True}
    plain = check(bash, {"script": "true", "display_name": "noop"})
    assert plain is not None and plain.monitor is None
    assert check(bash, {"script": "true", "display_name": "noop", "monitor": None}) is not None
    watched = {"script": "true", "display_name": "w", "monitor": {"filter": "FAIL"}}
    assert check(bash, watched) is None
