"""file_edit_replace_string: replace exact text, refusing ambiguous or missing matches."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, field_validator

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.editing import (
    EditRefused,
    edit_result,
    line_of_offset,
    load_text_file,
    normalize_newlines,
    refused,
    save_text_file,
)
from xum.tools.input import ToolInput


class ReplaceStringInput(ToolInput):
    path: str = Field(description="The file to edit: absolute, or relative to the workspace.")
    old_string: str = Field(
        description=(
            "The exact text to replace, whitespace and indentation included. With "
            "replace_count 1 it must occur exactly once: include enough surrounding lines to "
            "make it unique."
        )
    )
    new_string: str = Field(description="The text to put in its place.")
    replace_count: int | None = Field(
        default=None,
        description=(
            "How many occurrences to replace (default 1; -1 replaces all). With N > 1 the "
            "file must contain at least N and the first N are replaced."
        ),
    )

    @field_validator("replace_count")
    @classmethod
    def _valid_count(cls, value: int | None) -> int | None:
        if value is not None and value != -1 and value < 1:
            raise ValueError("must be -1 (all) or a positive number")
        return value


class FileEditReplaceStringTool(Tool):
    name = "file_edit_replace_string"
    description = (
        "Replace exact text in a file. old_string must match the file byte for byte "
        "(indentation included) and, by default, exactly once; the edit is refused with the "
        "match count when it is missing or ambiguous. Set replace_count to -1 to replace every "
        "occurrence. The file keeps its newline style and permissions and is replaced "
        "atomically. Read the file first so old_string is copied exactly."
    )
    Input: ClassVar[type[ToolInput]] = ReplaceStringInput
    read_only = False
    risk = "write"

    def summary(self, args: ReplaceStringInput) -> str:
        return args.path

    async def run(self, args: ReplaceStringInput, ctx: ToolContext) -> ToolResult:
        if args.old_string == "":
            return error(
                "old_string is empty; to add text use file_edit_insert (an anchor, or none to "
                "append or create the file)"
            )
        try:
            file = await load_text_file(ctx, args.path)
        except EditRefused as exc:
            return refused(exc)
        old = normalize_newlines(file, args.old_string)
        new = normalize_newlines(file, args.new_string)
        wanted = args.replace_count or 1
        found = file.text.count(old)
        if found == 0:
            return error(_no_match_message(args.path, file.text, old))
        if old == new:
            return ToolResult(
                output=f"No change: old_string and new_string are identical ({found} match"
                f"{'es' if found != 1 else ''} in {args.path}); the file was not written.",
                meta={"path": file.target.path, "noop": True, "matches": found},
            )
        if wanted == 1 and found > 1:
            lines = _match_lines(file.text, old, 10)
            return error(
                f"old_string occurs {found} times in {args.path} (lines {lines}); it must be "
                "unique. Include more surrounding context, or set replace_count to "
                f"{found} (or -1) to replace them all."
            )
        if wanted > 1 and found < wanted:
            return error(
                f"replace_count is {wanted} but old_string occurs only {found} time"
                f"{'s' if found != 1 else ''} in {args.path}; nothing was changed."
            )
        count = found if wanted == -1 else wanted
        first_line = line_of_offset(file.text, file.text.index(old))
        new_text = file.text.replace(old, new, count)
        if failed := await save_text_file(ctx, file, new_text):
            return failed
        where = f"at line {first_line}" if count == 1 else f"first at line {first_line}"
        return edit_result(
            file,
            new_text,
            f"Replaced {count} occurrence{'s' if count != 1 else ''} in {args.path} ({where}).",
            replacements=count,
            matches=found,
        )


def _match_lines(text: str, needle: str, limit: int) -> str:
    lines: list[str] = []
    start = 0
    while len(lines) < limit:
        index = text.find(needle, start)
        if index < 0:
            break
        lines.append(str(line_of_offset(text, index)))
        start = index + 1
    return ", ".join(lines) + (", ..." if text.find(needle, start) >= 0 else "")


def _no_match_message(path: str, text: str, old: str) -> str:
    message = f"old_string was not found in {path}; nothing was changed."
    # A near miss usually differs only in indentation or trailing spaces: say where it is.
    stripped = [line.strip() for line in old.strip("\n").split("\n")]
    if stripped and stripped[0]:
        file_lines = text.split("\n")
        for number, line in enumerate(file_lines, 1):
            window = file_lines[number - 1 : number - 1 + len(stripped)]
            if line.strip() == stripped[0] and [w.strip() for w in window] == stripped:
                return (
                    f"{message} Text matching it except for whitespace starts at line {number}: "
                    "read those lines with file_read and copy them exactly."
                )
    return f"{message} Read the file with file_read and copy the text exactly."
