"""The server's JSON back into the host's own types, for `xum.host.remote`.

The server sends engine events as `Event.to_dict()` (absent fields left out), workspaces as the
API's camelCase `Workspace`, questions as its `question` message (docs/api.md). A client of the
server hands its listener the same typed objects an in-process host would, so a front-end cannot
tell the two apart: these functions rebuild them. Unknown event types (a newer server) are
skipped rather than guessed at.
"""

from __future__ import annotations

import asyncio
from typing import Any

from xum.core.portblock import PortBlock
from xum.engine import events as E
from xum.host.inbox import WorkspaceRef
from xum.host.notifications import Notice
from xum.host.pending import PendingQuestion
from xum.store.registry import WorkspaceRecord
from xum.tools.base import Question, QuestionOption

_TYPES: dict[str, type[E.Event]] | None = None


def _types() -> dict[str, type[E.Event]]:
    global _TYPES
    if _TYPES is None:
        _TYPES = E.event_types()
    return _TYPES


def event_from_json(data: object) -> E.Event | None:
    """The typed event of one `event` message's `event` object; None when it is not one."""
    if not isinstance(data, dict):
        return None
    cls = _types().get(str(data.get("type", "")))
    if cls is None:
        return None
    # A field left out on the wire was None (serialization drops absent values).
    values = {name: data.get(name) for name in cls._fields}
    try:
        return cls(**values)
    except TypeError:
        return None


# The `discard-partial` that opens a resumed snapshot (every subscribe, every reconnect): the
# reply so far follows at once, so a front-end may redraw it quietly. Told apart by identity
# from the engine's own (a dropped model reply, which restarts).
RESUMED = E.DiscardPartial()


def partial_events(message: dict[str, Any]) -> list[E.Event]:
    """A `partial` snapshot as the events that would have built it: the in-flight reply is
    thrown away (`RESUMED`, a `discard-partial`), then its step, text, reasoning and tool calls
    so far."""
    out: list[E.Event] = [RESUMED]
    step, turn_id = message.get("step"), message.get("turnId")
    if isinstance(step, int) and isinstance(turn_id, str):
        out.append(E.StepStart(step=step, turn_id=turn_id))
    body = message.get("message")
    if not isinstance(body, dict):
        return out
    reasoning = body.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        out.append(E.ReasoningDelta(text=reasoning))
    text = body.get("text")
    if isinstance(text, str) and text:
        out.append(E.TextDelta(text=text))
    calls = body.get("tool_calls")
    for index, call in enumerate(calls if isinstance(calls, list) else []):
        if not isinstance(call, dict):
            continue
        call_id, name = str(call.get("id", "")), str(call.get("name", ""))
        out.append(E.ToolCallStart(index=index, call_id=call_id, name=name))
        arguments = call.get("arguments")
        if isinstance(arguments, str) and arguments:
            out.append(E.ToolCallDelta(index=index, call_id=call_id, arguments=arguments))
    return out


def record_from_json(data: dict[str, Any]) -> WorkspaceRecord:
    """A workspace record from the API's `Workspace` object."""
    runtime = data.get("runtime") if isinstance(data.get("runtime"), dict) else {}
    init = data.get("init") if isinstance(data.get("init"), dict) else {}
    assert isinstance(runtime, dict) and isinstance(init, dict)
    permissions = data.get("permissions")
    return WorkspaceRecord(
        id=str(data["id"]),
        name=str(data.get("name", "")),
        project_path=str(data.get("projectPath", "")),
        runtime=runtime.get("type", "local"),
        path=str(data.get("path", "")),
        title=str(data.get("title") or ""),
        branch=data.get("branch"),
        host=runtime.get("host"),
        agent=str(data.get("agent") or "exec"),
        model=data.get("model"),
        thinking=data.get("thinking"),
        parent_id=data.get("parentId"),
        created_at=int(data.get("createdAt") or 0),
        archived_at=data.get("archivedAt"),
        init_status=init.get("status"),
        init_exit_code=init.get("exitCode"),
        permissions=None if permissions == "auto" else permissions,
        ports=_ports(data.get("ports")),
        # A Docker workspace's image, a scratch chat (docs/workspaces.md) and "Notify on all
        # responses", where this side's record keeps them.
        extra=_extra(data, runtime),
        external_agent=data.get("externalAgent") or None,
    )


def _extra(data: dict[str, Any], runtime: dict[str, Any]) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if runtime.get("image"):
        extra["container_image"] = runtime["image"]
    for key, field in (("scratch", "scratch"), ("notify_on_response", "notifyOnResponse")):
        if data.get(field) is True:
            extra[key] = True
    return extra


def _ports(data: object) -> PortBlock | None:
    """The server's `{"first", "last", "count"}` as a block."""
    if not isinstance(data, dict):
        return None
    return PortBlock.from_json({"first": data.get("first"), "count": data.get("count")})


def question_from_json(message: dict[str, Any]) -> PendingQuestion:
    """A `question` message as the host's pending question. Its future is never awaited here:
    the server holds the real one; answering goes through `RemoteHosts.answer_question`."""
    questions = []
    for q in message.get("questions") or []:
        if not isinstance(q, dict):
            continue
        options = tuple(
            QuestionOption(str(o.get("label", "")), str(o.get("description", "")))
            for o in q.get("options") or []
            if isinstance(o, dict)
        )
        questions.append(
            Question(
                question=str(q.get("question", "")),
                header=str(q.get("header", "")),
                multi_select=bool(q.get("multiSelect")),
                options=options,
            )
        )
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    return PendingQuestion(
        id=str(message.get("questionId", "")),
        workspace_id=str(message.get("workspaceId", "")),
        questions=questions,
        future=future,
    )


def notice_from_json(data: object) -> Notice | None:
    """A `notification` message's notice (docs/api.md); None when it is not one."""
    if not isinstance(data, dict) or not isinstance(data.get("workspaceId"), str):
        return None
    body = data.get("body")
    since = data.get("since")
    return Notice(
        id=str(data.get("id") or ""),
        source=str(data.get("source") or ""),
        workspace_id=data["workspaceId"],
        workspace=WorkspaceRef(
            str(data.get("workspaceName") or ""), str(data.get("project") or "")
        ),
        title=str(data.get("title") or ""),
        body=body if isinstance(body, str) else None,
        since=since / 1000 if isinstance(since, int | float) else 0.0,
    )
