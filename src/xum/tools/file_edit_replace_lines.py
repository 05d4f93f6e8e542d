"""file_edit_replace_lines: replace (or delete) a 1-indexed inclusive line range."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from xum.tools.base import Tool, ToolContext, ToolResult, error, input_model
from xum.tools.editing import (
    EditRefused,
    edit_result,
    load_text_file,
    normalize_newlines,
    refused,
    save_text_file,
)

if TYPE_CHECKING:
    from xum.tools.file_edit_replace_lines_input import ReplaceLinesInput
    from xum.tools.input import ToolInput

_GUARD_PREVIEW_LINES = 20


class FileEditReplaceLinesTool(Tool):
    name = "file_edit_replace_lines"
    description = (
        "Replace the lines start_line..end_line (1-indexed, inclusive, as file_read numbers "
        "them) with new_lines; an empty new_lines deletes them. Pass expected_lines with the "
        "current content of the range to make the edit fail safely if the file changed. Keeps "
        "the file's newline style and permissions. Prefer file_edit_replace_string when the "
        "text to change is unique."
    )
    # Its pydantic model is imported only when needed (xum.tools.plain_args checks plain calls).
    Input: ClassVar[type[ToolInput]] = input_model(
        "xum.tools.file_edit_replace_lines_input:ReplaceLinesInput"
    )
    read_only = False
    risk = "write"

    def summary(self, args: ReplaceLinesInput) -> str:
        return f"{args.path}:{args.start_line}-{args.end_line}"

    async def run(self, args: ReplaceLinesInput, ctx: ToolContext) -> ToolResult:
        if args.end_line < args.start_line:
            return error(
                f"end_line ({args.end_line}) is before start_line ({args.start_line}); the range "
                "is inclusive, so one line is start_line == end_line. To add lines without "
                "replacing any, use file_edit_insert."
            )
        try:
            file = await load_text_file(ctx, args.path)
        except EditRefused as exc:
            return refused(exc)
        lines = file.text.split("\n")
        final_newline = lines[-1] == ""
        if final_newline:
            lines.pop()
        total = len(lines) if file.text else 0
        if args.end_line > total:
            return error(
                f"{args.path} has {total} line{'s' if total != 1 else ''}; the range "
                f"{args.start_line}–{args.end_line} goes past its end."
            )
        current = lines[args.start_line - 1 : args.end_line]
        if args.expected_lines is not None:
            expected = [normalize_newlines(file, line) for line in args.expected_lines]
            if expected != current:
                return error(_guard_message(args, current))
        replacement: list[str] = []
        for line in args.new_lines:
            replacement.extend(normalize_newlines(file, line).removesuffix("\n").split("\n"))
        new_lines = lines[: args.start_line - 1] + replacement + lines[args.end_line :]
        new_text = "\n".join(new_lines)
        if new_lines and final_newline:
            new_text += "\n"
        if new_text == file.text:
            return ToolResult(
                output=f"No change: lines {args.start_line}–{args.end_line} of {args.path} "
                "already hold those lines; the file was not written.",
                meta={"path": file.target.path, "noop": True},
            )
        if failed := await save_text_file(ctx, file, new_text):
            return failed
        removed = args.end_line - args.start_line + 1
        verb = "Deleted" if not replacement else "Replaced"
        tail = (
            ""
            if not replacement
            else f" with {len(replacement)} line{'s' if len(replacement) != 1 else ''}"
        )
        return edit_result(
            file,
            new_text,
            f"{verb} lines {args.start_line}–{args.end_line} ({removed} line"
            f"{'s' if removed != 1 else ''}) of {args.path}{tail}.",
            removed_lines=removed,
            added_lines=len(replacement),
        )


def _guard_message(args: ReplaceLinesInput, current: list[str]) -> str:
    shown = current[:_GUARD_PREVIEW_LINES]
    body = "\n".join(f"{args.start_line + i}\t{line}" for i, line in enumerate(shown))
    more = f"\n[... {len(current) - len(shown)} more lines]" if len(current) > len(shown) else ""
    return (
        f"expected_lines do not match lines {args.start_line}–{args.end_line} of {args.path}; "
        f"nothing was changed. The file has changed or the numbers are off. Those lines are "
        f"now:\n{body}{more}"
    )


def __getattr__(name: str) -> Any:
    # `from xum.tools.file_edit_replace_lines import ReplaceLinesInput` keeps working without pydantic here.
    if name == "ReplaceLinesInput":
        from xum.tools.file_edit_replace_lines_input import ReplaceLinesInput

        return ReplaceLinesInput
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
