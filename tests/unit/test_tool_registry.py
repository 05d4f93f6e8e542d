"""The registry: precomputed strict schemas, lazy imports, and validate_and_run's error results."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import orjson

from tests.support.tools import make_ctx
from xum.tools.base import Tool, ToolContext, ToolInput, ToolResult
from xum.tools.registry import (
    SCHEMAS_PATH,
    advertised_tool_names,
    is_read_only,
    tool_schema,
    validate_and_run,
)
from xum.tools.schemas import build_schemas, render

DOCUMENTED_PARAMETERS = {
    "bash": [
        "script",
        "display_name",
        "timeout_secs",
        "run_in_background",
        "monitor",
        "sandbox_escalation",
    ],
    "bash_output": ["process_id", "filter", "filter_exclude", "timeout_secs"],
    "bash_background_terminate": ["process_id"],
    "file_read": ["path", "offset", "limit"],
    "file_edit_replace_string": ["path", "old_string", "new_string", "replace_count"],
    "file_edit_replace_lines": ["path", "start_line", "end_line", "new_lines", "expected_lines"],
    "file_edit_insert": ["path", "content", "insert_after", "insert_before"],
    "todo_write": ["todos"],
    "todo_read": [],
    "web_fetch": ["url"],
    "web_search": ["query"],  # xum's own: the docs list the tool, not its parameters
    "attach_file": ["path", "filename", "mediaType"],
    "notify": ["title", "message"],
    "agent_skill_read": ["name"],
    "agent_skill_read_file": ["name", "filePath", "offset", "limit"],
    # `scope` (project or global) is xum's own: the docs' tools write one contextual root.
    "agent_skill_list": ["includeUnadvertised"],
    "agent_skill_write": ["name", "filePath", "content", "scope"],
    "agent_skill_delete": ["name", "target", "filePath", "confirm", "scope"],
    "propose_plan": [],
    "ask_user_question": ["questions"],
    "task": [
        "agentId",
        "title",
        "prompt",
        "model",
        "thinking",
        "n",
        "agents",  # xum's own addition: best of N across agents (docs/subagents.md)
        "run_in_background",
        "isolation",
    ],
    "task_await": ["task_ids", "min_completed", "timeout_secs"],
    "task_list": ["statuses"],
    "task_send_message": ["task_id", "message", "queue_dispatch_mode"],
    "task_stop": ["task_ids"],
    "task_remove": ["task_ids"],
    "task_retitle": ["task_id", "title"],
    "task_apply_git_patch": ["task_id", "dry_run", "expected_head_sha", "three_way", "force"],
    "agent_report": ["reportMarkdown", "title"],
    "set_exit_code": ["code", "reason"],
    "set_goal": ["objective", "budgetCents", "turnCap", "expectedGoalId", "replaceExistingGoal"],
    "get_goal": [],
    "complete_goal": ["summary", "goalId"],
    "tool_catalog_search": ["query", "limit"],
    "mcp_prompt_get": ["name", "arguments", "list_offset"],
    "mcp_resource_read": ["server", "uri", "list_offset"],
}


def test_committed_schemas_file_is_up_to_date() -> None:
    assert SCHEMAS_PATH.read_bytes() == render(build_schemas()), (
        "src/xum/tools/schemas.json is stale: run `python -m xum.tools.schemas --write`"
    )


def test_names_and_parameters_match_the_documented_contract() -> None:
    assert advertised_tool_names() == list(DOCUMENTED_PARAMETERS)
    for name, params in DOCUMENTED_PARAMETERS.items():
        schema = tool_schema(name)
        assert schema["name"] == name
        assert list(schema["parameters"]["properties"]) == params
    assert is_read_only("file_read") and is_read_only("web_fetch") and is_read_only("todo_read")
    assert is_read_only("web_search")
    assert not is_read_only("bash") and not is_read_only("file_edit_insert")


def _walk(node: Any, path: str = "$") -> list[str]:
    """Every strict-mode violation in a schema node."""
    problems: list[str] = []
    if isinstance(node, dict):
        for banned in (
            "$defs",
            "$ref",
            "title",
            "default",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "minLength",
            "maxLength",
        ):
            if banned in node:
                problems.append(f"{path}: has {banned}")
        if node.get("type") == "object":
            extra = node.get("additionalProperties")
            # A typed map (no properties of its own, e.g. mcp_prompt_get's `arguments`, whose
            # keys the server names) is the one open object: strict mode is off on every wire.
            is_map = isinstance(extra, dict) and not node.get("properties")
            if extra is not False and not is_map:
                problems.append(f"{path}: additionalProperties is not false")
            if node.get("required") != list(node.get("properties", {})):
                problems.append(f"{path}: required does not list every property")
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                # Property names (a tool may well have a parameter called `title`) are not
                # schema keywords: check each property's schema, not the mapping itself.
                for name, prop in value.items():
                    problems.extend(_walk(prop, f"{path}.properties.{name}"))
                continue
            problems.extend(_walk(value, f"{path}.{key}"))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            problems.extend(_walk(value, f"{path}[{index}]"))
    return problems


def test_schemas_are_strict_mode_shaped() -> None:
    entries = orjson.loads(SCHEMAS_PATH.read_bytes())
    for entry in entries:
        # "plain" is xum's own (xum.tools.plain_args), never sent to a provider.
        assert set(entry) == {"name", "description", "read_only", "risk", "parameters", "plain"}
        assert entry["risk"] in ("read", "write", "execute")
        assert entry["description"].strip()
        assert entry["parameters"]["type"] == "object"
        assert _walk(entry["parameters"]) == [], entry["name"]
    optional = tool_schema("file_read")["parameters"]["properties"]["offset"]
    assert optional["anyOf"] == [{"type": "integer"}, {"type": "null"}]
    todo_item = tool_schema("todo_write")["parameters"]["properties"]["todos"]["items"]
    assert todo_item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]


def test_listing_schemas_imports_neither_pydantic_nor_tool_modules() -> None:
    code = (
        "import sys\n"
        "from xum.tools.registry import advertised_tool_names, tool_schema\n"
        "[tool_schema(n) for n in advertised_tool_names()]\n"
        "loaded = [m for m in sys.modules if m == 'pydantic' or m.startswith('xum.tools.')]\n"
        "print(sorted(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['xum.tools.registry']"


async def test_malformed_json_is_an_error_result(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    result = await validate_and_run("bash", '{"script": "ls", ', ctx)
    assert result.is_error and "not valid JSON" in result.output
    result = await validate_and_run("bash", '["ls"]', ctx)
    assert result.is_error and "must be a JSON object, not an array" in result.output


async def test_wrong_types_and_missing_fields_are_listed(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    result = await validate_and_run(
        "file_read", '{"path": 5, "offset": "first", "extra": true}', ctx
    )
    assert result.is_error
    lines = result.output.splitlines()
    assert lines[0] == "Invalid arguments for file_read:"
    assert any(line.startswith("- path: ") and "string" in line for line in lines)
    assert any(line.startswith("- offset: ") for line in lines)
    assert "- extra: unknown parameter" in lines
    assert lines[-1].startswith(
        "Expected parameters: path (string, required), offset (integer, optional)"
    )
    missing = await validate_and_run("bash", '{"script": "ls"}', ctx)
    assert "- display_name: missing (required)" in missing.output


async def test_unknown_or_unoffered_tool_lists_the_available_ones(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    result = await validate_and_run("rm_rf", "{}", ctx)
    assert result.is_error and result.output.startswith(
        "Unknown tool 'rm_rf'. Available tools: bash,"
    )
    offered = await validate_and_run("bash", "{}", ctx, available=["file_read"])
    assert offered.output == "Unknown tool 'bash'. Available tools: file_read."


async def test_nulls_mean_defaults_and_empty_arguments_are_an_empty_object(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    Path(ctx.runtime.workspace_path, "a.txt").write_text("hi\n")
    result = await validate_and_run(
        "file_read", '{"path": "a.txt", "offset": null, "limit": null}', ctx
    )
    assert result.output == "1\thi"
    assert (await validate_and_run("todo_read", "", ctx)).output == "The task list is empty."


class _Boom(ToolInput):
    pass


class _CrashingTool(Tool):
    name = "crash"
    description = "raises"
    Input: ClassVar[type[ToolInput]] = _Boom

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        raise KeyError("missing thing")


async def test_a_crashing_tool_becomes_an_error_result(tmp_path: Path) -> None:
    result = await validate_and_run("crash", "{}", make_ctx(tmp_path), tool=_CrashingTool())
    assert result.is_error
    assert result.output == "the tool crashed: KeyError: 'missing thing'"
    assert result.meta["crashed"] is True


async def test_end_to_end_bash_through_the_registry(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    result = await validate_and_run(
        "bash", '{"script": "echo hi", "display_name": "greet", "timeout_secs": null}', ctx
    )
    assert result.output == "hi\n[exit code 0]"


def test_each_tool_declares_its_risk_tier() -> None:
    """The registry's tier (from schemas.json) is the tool class's own, and the tools that
    change files or run things say so."""
    from xum.tools.registry import risk_tier, tool_class, tool_names

    for name in tool_names():
        assert risk_tier(name) == tool_class(name).risk, name
    assert risk_tier("bash") == "execute"
    assert risk_tier("file_read") == "read"
    for name in ("file_edit_replace_string", "file_edit_replace_lines", "file_edit_insert"):
        assert risk_tier(name) == "write"
