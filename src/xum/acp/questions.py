"""`ask_user_question` in an editor: each question becomes a `session/request_permission`.

ACP's way of putting a choice to the user is a permission request: a tool call and a few
options, one of which the user picks. Each question is asked in turn, its options as the
choices plus one to skip; the answer is the label picked. Skipping a question, or the prompt
being cancelled (the editor then answers `cancelled`), dismisses the questions, which the tool
tells the model. A permission request picks exactly one option, so a multi-select question is
answered with one of its labels, and there is no free-text "Other" answer here. An editor that
fails the request (or does not implement it) counts as nobody answering.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from xum.acp.toolviews import text_content

log = logging.getLogger("xum.acp")

if TYPE_CHECKING:
    from acp.interfaces import Client

    from xum.tools.base import Question

SKIP_OPTION = "skip"


def _option_id(index: int) -> str:
    return f"option-{index}"


def _body(question: Question) -> str:
    lines = [question.question]
    if question.multi_select:
        lines.append("(Several apply? Pick the main one; you can say more in your next message.)")
    lines.extend(f"- **{o.label}**: {o.description}" for o in question.options if o.description)
    return "\n".join(lines)


class EditorQuestions:
    """Asks the editor the questions of one ACP session; the session settles the host's
    pending question (`xum.host.pending.Questions`) with the answers."""

    def __init__(
        self,
        client: Client,
        session_id: str,
        before: Callable[[], Awaitable[None]],
        call_id: Callable[[], str | None],
    ) -> None:
        """`before`: waits until the updates pushed so far reached the editor (the tool call a
        request refers to must be there first); `call_id`: the asking tool call's id."""
        self.client = client
        self.session_id = session_id
        self.before = before
        self.call_id = call_id

    async def __call__(self, questions: Sequence[Question]) -> Mapping[str, str] | None:
        await self.before()
        call_id = self.call_id() or "ask_user_question"
        answers: dict[str, str] = {}
        for question in questions:
            options = [
                PermissionOption(option_id=_option_id(i), name=o.label, kind="allow_once")
                for i, o in enumerate(question.options)
            ]
            options.append(PermissionOption(option_id=SKIP_OPTION, name="Skip", kind="reject_once"))
            try:
                reply = await self.client.request_permission(
                    session_id=self.session_id,
                    tool_call=ToolCallUpdate(
                        tool_call_id=call_id,
                        title=question.header or question.question,
                        kind="think",
                        status="pending",
                        content=[text_content(_body(question))],
                    ),
                    options=options,
                )
            except Exception as exc:  # an editor that cannot ask: nobody answers
                log.warning("the editor did not ask the question (%s)", exc)
                return None
            outcome = reply.outcome
            if not isinstance(outcome, AllowedOutcome) or outcome.option_id == SKIP_OPTION:
                return None
            picked = {_option_id(i): o.label for i, o in enumerate(question.options)}
            label = picked.get(outcome.option_id)
            if label is None:  # an id we never offered: treat it as no answer
                return None
            answers[question.question] = label
        return answers
