"""What a session takes over from its log when it opens: one pass over the frames.

The task list as the last successful `todo_write` left it (a `/clear` empties it), the cost of
every reply, refused reply and summarization pass so far (known only if every price was), and
those costs per model that wrote them, and the key of the last request header (so the first request
of this process does not write a header identical to the one already on record).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xum.engine.replay import header_key
from xum.store import frame_types as ev
from xum.store.frames import Frame

if TYPE_CHECKING:
    from xum.tools.base import TodoItem


@dataclass(slots=True)
class Resumed:
    """What a session's log says about its state when it is opened again."""

    todos: list[TodoItem]
    cost: float
    cost_known: bool
    header_key: bytes | None
    by_model: dict[str, float]


def resume(frames: Sequence[Frame]) -> Resumed:
    total, known = 0.0, True
    todos: list[Any] | None = None
    header: dict[str, Any] | None = None
    by_model: dict[str, float] = {}
    for frame in frames:
        if frame.damaged:
            continue
        kind = frame.type
        priced: ev.AssistantMessageData | ev.CompactionData | ev.ModelFallbackData | None = None
        model: Any = None
        if kind == ev.ASSISTANT_MESSAGE:
            priced = ev.payload(frame, ev.ASSISTANT_MESSAGE)
            model = priced.get("model")
        elif kind == ev.COMPACTION:
            summary = ev.payload(frame, ev.COMPACTION)
            # Only a summarization request costs something (Start Here sends none).
            priced = summary if "usage" in summary else None
            model = summary.get("model")
        elif kind == ev.MODEL_FALLBACK:
            refused = ev.payload(frame, ev.MODEL_FALLBACK)
            # A refused reply is billed; a request refused with an error is not (no usage).
            priced = refused if "usage" in refused else None
            model = refused.get("from_model")
        if priced is not None:
            cost = priced.get("cost_usd")
            if cost is None:
                known = False
            else:
                total += float(cost)
                if isinstance(model, str):
                    by_model[model] = by_model.get(model, 0.0) + float(cost)
        elif kind == ev.CONTEXT_RESET:
            todos = []
        elif kind == ev.REQUEST_HEADER:
            header = frame.data
        elif kind == ev.TOOL_RESULT and frame.may_contain(b'"todo_write"'):
            # (the check spares decoding every tool result of a long log's lazy frames)
            written = _written_todos(frame.data)
            if written is not None:
                todos = written
    return Resumed(
        _todo_items(todos) if todos is not None else [],
        total,
        known,
        header_key(header) if header is not None else None,
        by_model,
    )


def _written_todos(data: dict[str, Any]) -> list[Any] | None:
    """The list a successful todo_write result carries, else None."""
    parts = data.get("message", {}).get("content", [])
    part = parts[0] if parts and isinstance(parts[0], dict) else {}
    todos = data.get("meta", {}).get("todos")
    if part.get("name") != "todo_write" or part.get("is_error") or not isinstance(todos, list):
        return None
    return todos


def _todo_items(todos: list[Any]) -> list[TodoItem]:
    from xum.tools.base import TodoItem  # only sessions that used todo_write get here

    return [
        TodoItem(content=t["content"], status=t["status"])
        for t in todos
        if isinstance(t, dict) and t.get("status") in ("pending", "in_progress", "completed")
    ]
