"""The pydantic base of every tool input model.

Kept apart from `xum.tools.base` so that building a request (which needs only the
precomputed schemas) never imports pydantic; it is loaded when a tool is first dispatched.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ToolInput(BaseModel):
    """Unknown fields are refused; names stay as written."""

    model_config = ConfigDict(extra="forbid")
