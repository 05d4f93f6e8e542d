"""The tool registry: names, precomputed schemas, lazy dispatch, and safe validation.

Listing tools and their schemas costs one small orjson read of `schemas.json`; no tool module
(and no pydantic) is imported until a tool is actually called. A well-formed call to a tool with
a plain input model (bash, file_read) is checked against the spec in `schemas.json` without
pydantic (`xum.tools.plain_args`); any other call, and every invalid one, goes to pydantic. `validate_and_run` is the one
door the engine uses: whatever the model sends (bad JSON, wrong types, an unknown tool) and
whatever the tool does (even crash), the answer is a ToolResult and the turn goes on.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from xum.tools.base import RiskTier, Tool, ToolContext, ToolResult
    from xum.tools.plain_args import PlainArgs

SCHEMAS_PATH = Path(__file__).with_name("schemas.json")

# Name -> "module:Class", in the order tools are offered to a model.
_TOOLS: dict[str, str] = {
    "bash": "xum.tools.bash:BashTool",
    # Background processes that `bash` started (offered where background commands are).
    "bash_output": "xum.tools.bash_output:BashOutputTool",
    "bash_background_terminate": (
        "xum.tools.bash_background_terminate:BashBackgroundTerminateTool"
    ),
    "file_read": "xum.tools.file_read:FileReadTool",
    "file_edit_replace_string": "xum.tools.file_edit_replace_string:FileEditReplaceStringTool",
    "file_edit_replace_lines": "xum.tools.file_edit_replace_lines:FileEditReplaceLinesTool",
    "file_edit_insert": "xum.tools.file_edit_insert:FileEditInsertTool",
    "todo_write": "xum.tools.todo_write:TodoWriteTool",
    "todo_read": "xum.tools.todo_read:TodoReadTool",
    "web_fetch": "xum.tools.web_fetch:WebFetchTool",
    # Offered only where config.json `webSearch` gives the model a search (xum.llm.websearch);
    # with the provider's own search the request carries that instead (engine.native_search).
    "web_search": "xum.tools.web_search:WebSearchTool",
    # Offered only to models that take images (xum.engine.images).
    "attach_file": "xum.tools.attach_file:AttachFileTool",
    # A desktop notification for the user (docs/notifications.md); an agent whose tool policy
    # removes it never gets it.
    "notify": "xum.tools.notify:NotifyTool",
    # Skills and plan mode (agents' tool policies decide who gets them).
    "agent_skill_read": "xum.tools.agent_skill_read:AgentSkillReadTool",
    "agent_skill_read_file": "xum.tools.agent_skill_read_file:AgentSkillReadFileTool",
    # Skill management (the built-in exec and plan agents leave write and delete out).
    "agent_skill_list": "xum.tools.agent_skill_list:AgentSkillListTool",
    "agent_skill_write": "xum.tools.agent_skill_write:AgentSkillWriteTool",
    "agent_skill_delete": "xum.tools.agent_skill_delete:AgentSkillDeleteTool",
    "propose_plan": "xum.tools.propose_plan:ProposePlanTool",
    "ask_user_question": "xum.tools.ask_user_question:AskUserQuestionTool",
    # Sub-agents and background processes (the engine offers the host-backed ones only when
    # the session has a sub-agent host; agent_report only to sub-agents).
    "task": "xum.tools.task:TaskTool",
    "task_await": "xum.tools.task_await:TaskAwaitTool",
    "task_list": "xum.tools.task_list:TaskListTool",
    "task_send_message": "xum.tools.task_send_message:TaskSendMessageTool",
    "task_stop": "xum.tools.task_stop:TaskStopTool",
    "task_remove": "xum.tools.task_remove:TaskRemoveTool",
    "task_retitle": "xum.tools.task_retitle:TaskRetitleTool",
    "task_apply_git_patch": "xum.tools.task_apply_git_patch:TaskApplyGitPatchTool",
    "agent_report": "xum.tools.agent_report:AgentReportTool",
    # Offered only in `xum run` sessions (the engine adds it when ctx.set_exit_code is set).
    "set_exit_code": "xum.tools.set_exit_code:SetExitCodeTool",
    # Goals: offered to top-level sessions whose front-end continues goals (xum run, server).
    "set_goal": "xum.tools.set_goal:SetGoalTool",
    "get_goal": "xum.tools.get_goal:GetGoalTool",
    "complete_goal": "xum.tools.complete_goal:CompleteGoalTool",
    # MCP (offered only where the workspace has MCP servers; the servers' own tools are named
    # `mcp__<server>__<tool>` and reach them through ctx.mcp, see xum.tools.mcp_call).
    "tool_catalog_search": "xum.tools.tool_catalog_search:ToolCatalogSearchTool",
    "mcp_prompt_get": "xum.tools.mcp_prompt_get:McpPromptGetTool",
    "mcp_resource_read": "xum.tools.mcp_resource_read:McpResourceReadTool",
}

_MAX_ERRORS_LISTED = 20


def tool_names() -> list[str]:
    return list(_TOOLS)


def advertised_tool_names() -> list[str]:
    """Every tool some session can be offered (the parity ledger reconciles against this)."""
    return list(_TOOLS)


@cache
def _schemas() -> dict[str, dict[str, Any]]:
    entries = orjson.loads(SCHEMAS_PATH.read_bytes())
    return {entry["name"]: entry for entry in entries}


def tool_schema(name: str) -> dict[str, Any]:
    """{"name", "description", "parameters"} for a provider request. KeyError when unknown."""
    entry = _schemas()[name]
    return {
        "name": entry["name"],
        "description": entry["description"],
        "parameters": entry["parameters"],
    }


def is_read_only(name: str) -> bool:
    """Read-only tools called in one step may run concurrently."""
    return bool(_schemas()[name]["read_only"])


def risk_tier(name: str) -> RiskTier:
    """The tool's own risk tier (`xum.tools.base.RiskTier`); KeyError when unknown."""
    tier: RiskTier = _schemas()[name].get("risk", "read")
    return tier


def tool_class(name: str) -> type[Tool]:
    """The tool's class; imports its module (and pydantic) on first use. KeyError when unknown."""
    module_name, _, class_name = _TOOLS[name].partition(":")
    cls: type[Tool] = getattr(importlib.import_module(module_name), class_name)
    return cls


_prewarmed = False


# How long the prewarm thread waits for its gate before it starts anyway.
PREWARM_GATE_S = 2.0


def prewarm(
    names: Sequence[str], modules: Sequence[str] = (), gate: threading.Event | None = None
) -> None:
    """Import the caller's `modules`, then these tools' modules, each followed by what its calls
    load on the way (`Tool.warm`), on a background thread (once per process). Tool modules
    whose input models are not kept apart import pydantic with them.

    The engine calls this when it sends its first request, with a `gate` set once the request
    is out: a model takes far longer to answer than these imports, so the first tool call no
    longer pays for them, and until the gate opens (or `PREWARM_GATE_S` passed) the thread
    waits, leaving the interpreter to the request being prepared.
    """
    global _prewarmed
    if _prewarmed:
        return
    _prewarmed = True
    wanted = [n for n in names if n in _TOOLS]

    def work() -> None:
        if gate is not None:
            gate.wait(PREWARM_GATE_S)
        with contextlib.suppress(Exception):  # an import error shows where it is used
            for module in (*modules, "xum.tools.plain_args"):
                importlib.import_module(module)
        for name in wanted:
            with contextlib.suppress(Exception):  # a broken tool reports itself when called
                for entry in get_tool(name).warm:
                    module, _, function = entry.partition(":")
                    loaded = importlib.import_module(module)
                    if function:
                        getattr(loaded, function)()

    threading.Thread(target=work, name="xum-tool-prewarm", daemon=True).start()


@cache
def get_tool(name: str) -> Tool:
    """A shared instance (tools keep no per-call state)."""
    return tool_class(name)()


async def validate_and_run(
    name: str,
    raw_arguments_json: str,
    ctx: ToolContext,
    *,
    available: Sequence[str] | None = None,
    tool: Tool | None = None,
) -> ToolResult:
    """Parse, validate and run one tool call; every failure becomes an error result.

    `available` is the set of tools this session offers (default: all); `tool` overrides the
    registry's instance (a tool configured by the caller).
    """
    from xum.tools.base import ToolResult, error

    offered = list(available) if available is not None else tool_names()
    if tool is None and name not in _TOOLS and name in offered and ctx.mcp is not None:
        from xum.tools.mcp_call import run_mcp_tool

        return await run_mcp_tool(name, raw_arguments_json, ctx)
    if tool is None:
        if name not in offered or name not in _TOOLS:
            return error(
                f"Unknown tool {name!r}. Available tools: {', '.join(offered) or '(none)'}.",
                unknown_tool=name,
            )
        tool = get_tool(name)
    arguments = _parse_arguments(name, raw_arguments_json)
    if isinstance(arguments, ToolResult):
        return arguments
    args: Any = _plain(tool, name, arguments)
    if args is None:
        args = _validate(tool, arguments)
    if isinstance(args, ToolResult):
        return args
    try:
        return await tool.run(args, ctx)
    except Exception as exc:  # a bug in the tool; the turn must go on (CancelledError passes)
        return error(
            f"the tool crashed: {type(exc).__name__}: {exc}",
            crashed=True,
            exception=type(exc).__name__,
        )


def _parse_arguments(name: str, raw: str) -> dict[str, Any] | ToolResult:
    from xum.tools.base import error

    if not raw.strip():
        return {}  # some providers send "" for a call without arguments
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        snippet = raw if len(raw) <= 200 else raw[:200] + "..."
        return error(
            f"The arguments for {name} are not valid JSON ({exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}): {snippet}\nSend one JSON object with the parameters.",
            bad_json=True,
        )
    if not isinstance(value, dict):
        return error(
            f"The arguments for {name} must be a JSON object, not {_json_type(value)}.",
            bad_json=True,
        )
    return value


def _plain(tool: Tool, name: str, arguments: dict[str, Any]) -> PlainArgs | None:
    """The arguments checked without pydantic, when the tool's model is plain and they plainly
    fit it (`xum.tools.plain_args`); None: pydantic validates them (and words any error)."""
    from xum.tools.plain_args import check

    entry = _schemas().get(name)
    # Only the registry's own class matches the spec generated from its model.
    if entry is None or not entry.get("plain") or type(tool) is not tool_class(name):
        return None
    return check(entry["plain"], arguments)


def _validate(tool: Tool, arguments: dict[str, Any]) -> Any:
    from pydantic import ValidationError

    from xum.tools.base import error

    try:
        return tool.Input.model_validate(arguments)
    except ValidationError as exc:
        problems = [_describe(err) for err in exc.errors(include_url=False)]
        listed = problems[:_MAX_ERRORS_LISTED]
        if len(problems) > len(listed):
            listed.append(f"... and {len(problems) - len(listed)} more")
        return error(
            f"Invalid arguments for {tool.name}:\n"
            + "\n".join(f"- {line}" for line in listed)
            + f"\nExpected parameters: {_parameter_summary(tool)}",
            invalid_arguments=True,
        )


def _describe(err: Any) -> str:
    where = _location(err.get("loc", ()))
    kind = err.get("type", "")
    if kind == "missing":
        return f"{where}: missing (required)"
    if kind == "extra_forbidden":
        return f"{where}: unknown parameter"
    message = str(err.get("msg", "invalid"))
    message = message.removeprefix("Value error, ")
    got = err.get("input")
    shown = orjson.dumps(got, default=str).decode()
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return f"{where}: {message} (got {shown})"


def _location(loc: Sequence[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(arguments)"


def _parameter_summary(tool: Tool) -> str:
    schema = tool.Input.model_json_schema()
    required = set(schema.get("required", []))
    parts = []
    for prop_name, prop in schema.get("properties", {}).items():
        types = [
            b.get("type", "object") for b in prop.get("anyOf", [prop]) if b.get("type") != "null"
        ]
        kind = " or ".join(str(t) for t in types) or "value"
        parts.append(f"{prop_name} ({kind}, {'required' if prop_name in required else 'optional'})")
    return ", ".join(parts) or "(none)"


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null" if value is None else type(value).__name__
