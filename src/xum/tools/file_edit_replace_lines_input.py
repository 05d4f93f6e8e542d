"""file_edit_replace_lines's input model (pydantic), apart from the tool so that running a plain
call needs no pydantic (`xum.tools.plain_args`); the schema and every validation error come from
here."""

from __future__ import annotations

from pydantic import Field

from xum.tools.input import ToolInput


class ReplaceLinesInput(ToolInput):
    path: str = Field(description="The file to edit: absolute, or relative to the workspace.")
    start_line: int = Field(ge=1, description="First line to replace, 1-indexed, inclusive.")
    end_line: int = Field(ge=1, description="Last line to replace, 1-indexed, inclusive.")
    new_lines: list[str] = Field(
        description="The replacement lines, without newline characters. Empty deletes the range."
    )
    expected_lines: list[str] | None = Field(
        default=None,
        description=(
            "Optional guard: the lines currently in the range. The edit is refused unless they "
            "match exactly, which protects against editing stale line numbers."
        ),
    )
