"""file_edit_insert's input model (pydantic), apart from the tool so that running a plain
call needs no pydantic (`xum.tools.plain_args`); the schema and every validation error come from
here."""

from __future__ import annotations

from pydantic import Field

from xum.tools.input import ToolInput


class InsertInput(ToolInput):
    path: str = Field(description="The file to edit: absolute, or relative to the workspace.")
    content: str = Field(description="The text to insert, exactly as it should appear.")
    insert_after: str | None = Field(
        default=None,
        description="Anchor text that must occur exactly once; content goes right after it.",
    )
    insert_before: str | None = Field(
        default=None,
        description="Anchor text that must occur exactly once; content goes right before it.",
    )
