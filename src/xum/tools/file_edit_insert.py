"""file_edit_insert: insert text next to a unique anchor, or append (creating the file)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from xum.tools.base import Tool, ToolContext, ToolResult, error, input_model
from xum.tools.editing import (
    EditRefused,
    edit_result,
    line_of_offset,
    load_text_file,
    normalize_newlines,
    refused,
    save_text_file,
)

if TYPE_CHECKING:
    from xum.tools.file_edit_insert_input import InsertInput
    from xum.tools.input import ToolInput


class FileEditInsertTool(Tool):
    name = "file_edit_insert"
    description = (
        "Insert content into a file right after (insert_after) or right before (insert_before) "
        "an anchor substring that must occur exactly once. Give at most one anchor. With no "
        "anchor, content is appended to the end of the file, and a file that does not exist "
        "yet is created (missing directories too): this is how to write a new file. Insertion "
        "is literal: include the newlines you want around content. Keeps the file's newline "
        "style and permissions."
    )
    # Its pydantic model is imported only when needed (xum.tools.plain_args checks plain calls).
    Input: ClassVar[type[ToolInput]] = input_model("xum.tools.file_edit_insert_input:InsertInput")
    read_only = False
    risk = "write"

    def summary(self, args: InsertInput) -> str:
        return args.path

    async def run(self, args: InsertInput, ctx: ToolContext) -> ToolResult:
        # An empty anchor would match everywhere; models send "" for "not used".
        after = args.insert_after or None
        before = args.insert_before or None
        if after is not None and before is not None:
            return error("give insert_after or insert_before, not both")
        anchored = after is not None or before is not None
        try:
            file = await load_text_file(ctx, args.path, missing_ok=not anchored)
        except EditRefused as exc:
            return refused(exc)
        content = normalize_newlines(file, args.content)
        if not anchored:
            if not content:
                return ToolResult(
                    output="No change: content is empty.",
                    meta={"path": file.target.path, "noop": True},
                )
            new_text = file.text + content
            if failed := await save_text_file(ctx, file, new_text):
                return failed
            if not file.exists:
                return edit_result(
                    file,
                    new_text,
                    f"Created {args.path} ({len(new_text.encode()):,} bytes).",
                    created=True,
                )
            return edit_result(file, new_text, f"Appended to the end of {args.path}.")

        anchor = normalize_newlines(file, after if after is not None else before or "")
        which = "insert_after" if after is not None else "insert_before"
        found = file.text.count(anchor)
        if found != 1:
            problem = "was not found" if found == 0 else f"occurs {found} times"
            return error(
                f"{which} anchor {problem} in {args.path}; it must occur exactly once. "
                "Use a longer, unique anchor copied exactly from the file."
            )
        index = file.text.index(anchor)
        at = index + len(anchor) if after is not None else index
        new_text = file.text[:at] + content + file.text[at:]
        if new_text == file.text:
            return ToolResult(
                output="No change: content is empty.",
                meta={"path": file.target.path, "noop": True},
            )
        if failed := await save_text_file(ctx, file, new_text):
            return failed
        line = line_of_offset(file.text, at)
        side = "after" if after is not None else "before"
        return edit_result(
            file, new_text, f"Inserted {side} the anchor at line {line} of {args.path}."
        )


def __getattr__(name: str) -> Any:
    # `from xum.tools.file_edit_insert import InsertInput` keeps working without pydantic here.
    if name == "InsertInput":
        from xum.tools.file_edit_insert_input import InsertInput

        return InsertInput
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
