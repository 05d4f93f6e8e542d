"""The notify tool: its documented bounds, and what it hands the engine."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.tools import make_ctx
from xum.tools.registry import tool_schema, validate_and_run


async def test_a_notification_is_checked_and_carried_in_meta(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    args = json.dumps({"title": " Tests pass ", "message": "all 41 green"})
    result = await validate_and_run("notify", args, ctx)
    assert not result.is_error, result.output
    assert result.output == "Notification sent: Tests pass"
    assert result.meta == {"notification": {"title": "Tests pass", "message": "all 41 green"}}
    bare = await validate_and_run("notify", json.dumps({"title": "Done", "message": None}), ctx)
    assert bare.meta == {"notification": {"title": "Done", "message": None}}


async def test_bounds_as_documented(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    at_limit = await validate_and_run(
        "notify", json.dumps({"title": "t" * 64, "message": "m" * 200}), ctx
    )
    assert not at_limit.is_error
    long_title = await validate_and_run("notify", json.dumps({"title": "t" * 65}), ctx)
    assert long_title.is_error and "65 characters" in long_title.output
    assert "meta" not in long_title.output and long_title.meta.get("notification") is None
    long_message = await validate_and_run(
        "notify", json.dumps({"title": "ok", "message": "m" * 201}), ctx
    )
    assert long_message.is_error and "201 characters" in long_message.output
    empty = await validate_and_run("notify", json.dumps({"title": "  "}), ctx)
    assert empty.is_error and "empty" in empty.output
    extra = await validate_and_run("notify", json.dumps({"title": "x", "sound": True}), ctx)
    assert extra.is_error  # the schema is strict


def test_schema_matches_the_docs() -> None:
    schema = tool_schema("notify")
    params = schema["parameters"]
    assert sorted(params["properties"]) == ["message", "title"]
    assert params["additionalProperties"] is False
    assert "max 64 chars" in params["properties"]["title"]["description"]
    assert "max 200 chars" in params["properties"]["message"]["description"]
