"""file_read's input model (pydantic), apart from the tool so that running a plain call needs
no pydantic (`xum.tools.plain_args`); the schema and every validation error come from here."""

from __future__ import annotations

from pydantic import Field

from xum.tools.file_read import MAX_LINES
from xum.tools.input import ToolInput


class FileReadInput(ToolInput):
    path: str = Field(description="The file to read: absolute, or relative to the workspace.")
    offset: int | None = Field(
        default=None, ge=1, description="First line to show, 1-based (default 1)."
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description=f"How many lines to show from offset (default: up to {MAX_LINES}).",
    )
