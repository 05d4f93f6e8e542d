"""How each transcript entry is drawn: Rich text, built from the entry alone.

Tool calls get one card each: bash with its command, live output, exit code and duration; file
edits as coloured diffs; todo lists as a checklist; sub-agent tasks with their status; a plain
card for the rest. Everything the model or the repository wrote goes in as plain `Text` (never
markup) with terminal control sequences removed, so neither can style, move or retitle the
user's terminal. Colours are the terminal's own ANSI colours, which read on a light or a dark
background; under `NO_COLOR` Textual turns them to monochrome.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from xum.engine.display import key_argument, outcome, strip_controls
from xum.tui.transcript import (
    InitEntry,
    NoticeEntry,
    TaskEntry,
    ToolEntry,
)

OUTPUT_LINES = 12  # of a command's output in its card
DIFF_LINES = 60
LINE_CHARS = 400  # a longer line is cut (a minified file should not fill the screen)

EDIT_TOOLS = {"file_edit_replace_string", "file_edit_replace_lines", "file_edit_insert"}
TASK_TOOLS = {"task", "task_await", "task_list", "task_stop", "task_send_message"}

_STATE_MARK = {
    "streaming": ("…", "yellow"),
    "pending": ("…", "yellow"),
    "running": ("●", "yellow"),
    "missing": ("?", "magenta"),
}
_TODO_MARK = {"completed": ("✓", "green"), "in_progress": ("▶", "yellow"), "pending": ("○", "")}
_TASK_STATUS = {
    "queued": "yellow",
    "running": "yellow",
    "reported": "green",
    "interrupted": "magenta",
    "failed": "red",
    "removed": "bright_black",
}


def plain(text: str) -> Text:
    """Untrusted text as it reads, with nothing interpreted."""
    return Text(strip_controls(text).expandtabs(4))


def tail(text: str, lines: int) -> tuple[list[str], int]:
    """The last `lines` lines of `text` (each cut at LINE_CHARS) and how many were left out."""
    rows = strip_controls(text).expandtabs(4).rstrip("\n").split("\n")
    if rows == [""]:
        return [], 0
    cut = max(0, len(rows) - lines)
    return [r if len(r) <= LINE_CHARS else r[:LINE_CHARS] + "…" for r in rows[cut:]], cut


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def tool_header(entry: ToolEntry) -> Text:
    if entry.state == "done":
        mark, style = ("✗", "red") if entry.is_error else ("✓", "green")
    else:
        mark, style = _STATE_MARK[entry.state]
    head = Text()
    head.append(f"{mark} ", style=style)
    head.append(entry.name, style="bold")
    detail = _detail(entry)
    if detail:
        head.append("  ")
        head.append(detail)
    trail = _trail(entry)
    if trail:
        head.append("  ")
        head.append(trail, style="dim")
    return head


def _detail(entry: ToolEntry) -> str:
    args = entry.arguments
    if entry.state == "streaming":
        return "(writing the call…)"
    if entry.name == "bash" and isinstance(args, dict):
        name = args.get("display_name")
        return strip_controls(str(name)) if name else ""
    if entry.name == "task" and isinstance(args, dict):
        return " ".join(strip_controls(str(args.get("title", ""))).split())[:72]
    return key_argument(entry.name, args)


def _trail(entry: ToolEntry) -> str:
    if entry.state == "running":
        return "running"
    if entry.state == "missing":
        return "no result (the turn ended first)"
    if entry.state != "done":
        return ""
    parts = [outcome(entry.name, entry.is_error, entry.meta)]
    seconds = entry.meta.get("duration_s", entry.duration_s)
    if isinstance(seconds, int | float):
        parts.append(_duration(float(seconds)))
    return " · ".join(p for p in parts if p)


def tool_card(entry: ToolEntry) -> RenderableType:
    body: list[RenderableType] = [tool_header(entry)]
    if entry.name == "bash":
        body.extend(_bash(entry))
    elif entry.name in EDIT_TOOLS:
        body.extend(_edit(entry))
    elif entry.name == "todo_write":
        body.extend(_todos(entry))
    elif entry.name in TASK_TOOLS:
        body.extend(_task(entry))
    elif entry.name == "ask_user_question" and entry.state == "done":
        body.extend(_output(entry.output, OUTPUT_LINES))
    elif entry.state == "done":
        body.extend(_output(entry.output, 6 if entry.is_error else 3, dim=not entry.is_error))
    return Group(*body)


def _bash(entry: ToolEntry) -> list[RenderableType]:
    out: list[RenderableType] = []
    args = entry.arguments if isinstance(entry.arguments, dict) else {}
    script = str(args.get("script", "")) if args else str(entry.arguments or "")
    if entry.state == "streaming":
        script = entry.arguments_text
    lines, cut = tail(script, 6) if script else ([], 0)
    if lines:
        command = Text("$ ", style="bold cyan")
        command.append("\n  ".join(lines[:6]))
        if cut:
            command.append(f"\n  … {cut} more lines", style="dim")
        out.append(command)
    if args.get("run_in_background"):
        task_id = entry.meta.get("taskId")
        if task_id:
            out.append(Text(f"in the background: {task_id}", style="dim"))
    if entry.state == "running" or (
        entry.state == "done" and entry.live and "taskId" in entry.meta
    ):
        out.extend(_output(entry.live, OUTPUT_LINES, dim=True, cut_before=entry.live_cut))
    elif entry.state == "done":
        text = entry.output
        # The result's last line restates the exit code, which the header shows.
        if text.rstrip().endswith("]") and "\n[" in text:
            text = text[: text.rstrip().rfind("\n[")]
        out.extend(_output(text, OUTPUT_LINES))
        spill = entry.meta.get("spill_path")
        if spill:
            out.append(Text(strip_controls(f"full output: {spill}"), style="dim"))
    return out


def _output(
    text: str, lines: int, *, dim: bool = False, cut_before: bool = False
) -> list[RenderableType]:
    rows, cut = tail(text, lines)
    if not rows:
        return []
    block = Text()
    if cut or cut_before:
        block.append(f"… {cut} earlier lines\n" if cut else "… earlier output\n", style="dim")
    block.append("\n".join(rows), style="dim" if dim else "")
    return [block]


def diff_text(diff: str, lines: int = DIFF_LINES) -> Text:
    """A unified diff, coloured by line: additions green, removals red, hunks cyan."""
    rows = strip_controls(diff).expandtabs(4).rstrip("\n").split("\n")
    out = Text()
    for row in rows[:lines]:
        style = ""
        if row.startswith(("+++", "---")):
            style = "bold"
        elif row.startswith("+"):
            style = "green"
        elif row.startswith("-"):
            style = "red"
        elif row.startswith("@@"):
            style = "cyan"
        out.append(row[:LINE_CHARS] + "\n", style=style)
    if len(rows) > lines:
        out.append(f"… {len(rows) - lines} more lines", style="dim")
    out.rstrip()
    return out


def _edit(entry: ToolEntry) -> list[RenderableType]:
    if entry.state != "done":
        return []
    diff = entry.meta.get("diff")
    if isinstance(diff, str) and diff and not entry.is_error:
        return [diff_text(diff)]
    return _output(entry.output, 6)


def _todos(entry: ToolEntry) -> list[RenderableType]:
    items: Any = entry.meta.get("todos")
    if not isinstance(items, list) and isinstance(entry.arguments, dict):
        items = entry.arguments.get("todos")
    if not isinstance(items, list):
        return []
    out = Text()
    done = 0
    for item in items:
        if not isinstance(item, dict):
            continue
        status = str(item.get("status", "pending"))
        done += status == "completed"
        mark, style = _TODO_MARK.get(status, ("○", ""))
        out.append(f"{mark} ", style=style)
        out.append(strip_controls(str(item.get("content", ""))) + "\n")
    out.rstrip()
    return [Text(f"{done}/{len(items)} done", style="dim"), out]


def _task(entry: ToolEntry) -> list[RenderableType]:
    if entry.state != "done":
        return []
    tasks = entry.meta.get("tasks")
    if isinstance(tasks, list) and tasks:
        out = Text()
        for task in tasks:
            header = task.get("header") if isinstance(task, dict) else None
            if not isinstance(header, dict):
                continue
            status = str(header.get("status", ""))
            out.append(f"{status:<11}", style=_TASK_STATUS.get(status, ""))
            out.append(strip_controls(str(header.get("title") or header.get("taskId") or "")))
            out.append("\n")
        out.rstrip()
        if out.plain:
            return [out]
    ids = entry.meta.get("task_ids")
    if isinstance(ids, list) and ids:
        return [Text("started in the background: " + ", ".join(map(str, ids)), style="dim")]
    return _output(entry.output, 6)


def task_card(entry: TaskEntry) -> RenderableType:
    head = Text()
    head.append("⧉ sub-agent ", style="bold")
    head.append(strip_controls(entry.title) or entry.task_id)
    head.append("  ")
    head.append(entry.status, style=_TASK_STATUS.get(entry.status, ""))
    if not entry.report:
        return head
    rows, cut = tail(entry.report, 8)
    report = Text("\n".join(rows), style="dim")
    return Group(head, report) if not cut else Group(head, Text("…", style="dim"), report)


def notice(entry: NoticeEntry) -> Text:
    return Text(
        "· " + strip_controls(entry.text), style="yellow" if entry.level == "warn" else "dim"
    )


def init_card(entry: InitEntry) -> RenderableType:
    head = Text()
    if entry.status is None:
        head.append("● .xum/init running", style="yellow")
    elif entry.status == "succeeded":
        head.append("✓ .xum/init succeeded", style="green")
    else:
        code = f" (exit {entry.exit_code})" if entry.exit_code is not None else ""
        head.append(f"✗ .xum/init {entry.status}{code}", style="red")
    rows = entry.lines[-OUTPUT_LINES:]
    if not rows:
        return head
    return Group(head, Text("\n".join(strip_controls(r) for r in rows), style="dim"))
