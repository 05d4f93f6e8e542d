"""How one xum tool call looks in an editor: its ACP kind, a title, the files it touches, and
the content of its result (text, or diffs for file edits).

Pure functions over the engine's event fields: the translator (`updates.py`) calls them for
live events and for a replayed history alike, so a loaded session shows its calls the way they
looked when they ran.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, Literal

from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
)

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

_KINDS: dict[str, ToolKind] = {
    "file_read": "read",
    "agent_skill_read": "read",
    "agent_skill_read_file": "read",
    "todo_read": "read",
    "file_edit_replace_string": "edit",
    "file_edit_replace_lines": "edit",
    "file_edit_insert": "edit",
    "bash": "execute",
    "web_fetch": "fetch",
    "web_search": "search",
    "todo_write": "think",
    "ask_user_question": "think",
    "propose_plan": "switch_mode",
}

# What an editor gets of a tool's output: the tools bound their own results already; this
# keeps a chatty live stream (or a replayed history) from flooding the editor.
MAX_TEXT_CHARS = 64 * 1024


def tool_kind(name: str) -> ToolKind:
    return _KINDS.get(name, "other")


def _short(text: str, limit: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def tool_title(name: str, arguments: Any) -> str:
    """A one-line title: the command, the file or the URL the call is about."""
    args = arguments if isinstance(arguments, Mapping) else {}
    if name == "bash":
        shown = args.get("display_name") or args.get("script")
        return f"bash: {_short(str(shown))}" if shown else "bash"
    if name in ("file_read", "file_edit_replace_string", "file_edit_replace_lines"):
        verb = "Read" if name == "file_read" else "Edit"
        return f"{verb} {args['path']}" if isinstance(args.get("path"), str) else name
    if name == "file_edit_insert":
        return f"Insert into {args['path']}" if isinstance(args.get("path"), str) else name
    if name == "web_fetch" and isinstance(args.get("url"), str):
        return f"Fetch {_short(args['url'], 120)}"
    if name == "web_search" and isinstance(args.get("query"), str):
        return f"Search the web: {_short(args['query'])}"
    if name == "todo_write":
        return "Update the task list"
    if name == "ask_user_question":
        return "Ask the user"
    if name == "propose_plan":
        return "Propose the plan"
    if name in ("agent_skill_read", "agent_skill_read_file") and isinstance(args.get("name"), str):
        return f"Read skill {args['name']}"
    if name == "task" and isinstance(args.get("title"), str):
        return f"Sub-agent: {_short(args['title'])}"
    return name


def call_locations(name: str, arguments: Any, workspace_path: str) -> list[ToolCallLocation]:
    """The file a file tool is about (absolute, as ACP requires), for follow-along."""
    args = arguments if isinstance(arguments, Mapping) else {}
    path = args.get("path")
    if tool_kind(name) not in ("read", "edit") or not isinstance(path, str) or not path:
        return []
    absolute = os.path.normpath(os.path.join(workspace_path, os.path.expanduser(path)))
    line = args.get("offset") if name == "file_read" else args.get("start_line")
    return [ToolCallLocation(path=absolute, line=line if isinstance(line, int) else None)]


def text_content(text: str) -> ContentToolCallContent:
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))


def fenced(text: str) -> str:
    """`text` as a Markdown code block (editors render tool content as Markdown), with a fence
    longer than any run of backticks inside it, bounded to its last MAX_TEXT_CHARS."""
    if len(text) > MAX_TEXT_CHARS:
        text = "[... earlier output not shown ...]\n" + text[-MAX_TEXT_CHARS:]
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text.rstrip(chr(10))}\n{fence}"


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def diff_contents(path: str, diff: str) -> list[FileEditToolCallContent]:
    """The hunks of a file_edit tool's unified diff (its result `meta.diff`) as ACP diffs: the
    old and new text of each hunk, context lines included. A hunk that adds to an empty file
    has no old text (a new file). The tools cut long diffs; what is there is shown."""
    out: list[FileEditToolCallContent] = []
    old: list[str] = []
    new: list[str] = []
    new_file = False
    in_hunk = False
    last_tag = ""

    def flush() -> None:
        if in_hunk:
            out.append(
                FileEditToolCallContent(
                    type="diff",
                    path=path,
                    old_text=None if new_file and not old else "".join(old),
                    new_text="".join(new),
                )
            )

    for line in diff.splitlines(keepends=True):
        match = _HUNK.match(line)
        if match:
            flush()
            old, new, in_hunk = [], [], True
            new_file = match.group(1) == "0" and match.group(2) == "0"
            continue
        if not in_hunk or line.startswith("[... diff truncated"):
            continue
        if line.startswith("\\"):  # "\ No newline at end of file": the line before has none
            sides = {"-": (old,), "+": (new,), " ": (old, new)}.get(last_tag, ())
            for side in sides:
                if side and side[-1].endswith("\n"):
                    side[-1] = side[-1][:-1]
            continue
        tag, body = line[:1], line[1:]
        last_tag = tag
        if tag in (" ", "-"):
            old.append(body)
        if tag in (" ", "+"):
            new.append(body)
    flush()
    return out


def result_content(
    name: str, output: str, meta: Mapping[str, Any], is_error: bool
) -> list[ToolContent]:
    """What the editor shows for a finished call: diffs for a successful file edit, the plan
    for propose_plan, otherwise the output as a code block."""
    diff = meta.get("diff")
    path = meta.get("path")
    if not is_error and isinstance(diff, str) and isinstance(path, str):
        diffs: list[ToolContent] = list(diff_contents(path, diff))
        if diffs:
            return diffs
    plan = meta.get("plan")
    if (
        name == "propose_plan"
        and isinstance(plan, Mapping)
        and isinstance(plan.get("content"), str)
    ):
        return [text_content(plan["content"])]
    return [text_content(fenced(output))] if output else []


def edit_location(meta: Mapping[str, Any]) -> list[ToolCallLocation]:
    """Where a successful edit changed its file: the first hunk's new line."""
    path, diff = meta.get("path"), meta.get("diff")
    if not isinstance(path, str):
        return []
    line = None
    if isinstance(diff, str):
        for text in diff.splitlines():
            match = _HUNK.match(text)
            if match:
                line = int(match.group(3))
                break
    return [ToolCallLocation(path=path, line=line)]
