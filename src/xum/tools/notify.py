"""notify: send the user a notification (docs/notifications.md).

The tool only checks and returns what to show; the engine turns a successful call into a
`notification` event (`xum.engine.calls`), and the workspace host hands that to whichever
front-end shows notifications (the browser's Notification API, the terminal UI's desktop
notification escape sequences). Keeping the delivery out of the tool means a replayed log never
notifies anyone again: only the live event does.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput

MAX_TITLE_CHARS = 64
MAX_MESSAGE_CHARS = 200


class NotifyInput(ToolInput):
    # The bounds are checked in `run` rather than by the schema, so a call that is too long
    # gets an answer that says by how much (the docs' limits: 1-64 and at most 200).
    title: str = Field(
        description="Short notification title (max 64 chars). Should be concise and actionable."
    )
    message: str | None = Field(
        default=None,
        description=(
            "Optional notification body with more details (max 200 chars). "
            "Keep it brief - users may only see a preview."
        ),
    )


class NotifyTool(Tool):
    name = "notify"
    description = (
        "Send a system notification to the user. Use this to alert the user about important "
        "events that require their attention, such as long-running task completion, errors "
        "requiring intervention, or questions. Notifications appear as desktop notifications "
        "(the browser's, or the terminal's). Infer whether to send notifications from user "
        "instructions. If no instructions provided, reserve notifications for major wins or "
        "blocking issues. Do not use for routine progress updates — keep the todo list current "
        "instead."
    )
    Input: ClassVar[type[ToolInput]] = NotifyInput
    read_only = False

    def summary(self, args: NotifyInput) -> str:
        return args.title

    async def run(self, args: NotifyInput, ctx: ToolContext) -> ToolResult:
        title = args.title.strip()
        message = (args.message or "").strip() or None
        if not title:
            return error("The notification was not sent: `title` is empty; give a short title.")
        if len(title) > MAX_TITLE_CHARS:
            return error(
                f"The notification was not sent: `title` is {len(title)} characters; keep it "
                f"to {MAX_TITLE_CHARS} and put details in `message`."
            )
        if message is not None and len(message) > MAX_MESSAGE_CHARS:
            return error(
                f"The notification was not sent: `message` is {len(message)} characters; keep "
                f"it to {MAX_MESSAGE_CHARS}."
            )
        return ToolResult(
            output=f"Notification sent: {title}",
            meta={"notification": {"title": title, "message": message}},
        )
