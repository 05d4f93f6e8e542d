"""bash's input model (pydantic), apart from the tool so that running a plain call needs no
pydantic (`xum.tools.plain_args`); the schema and every validation error come from here."""

from __future__ import annotations

from pydantic import Field

from xum.tools.bash import (
    BACKGROUND_DEFAULT_LIFETIME_S,
    BACKGROUND_MAX_LIFETIME_S,
    DEFAULT_TIMEOUT_S,
    MAX_TIMEOUT_S,
)
from xum.tools.input import ToolInput


class BashInput(ToolInput):
    script: str = Field(description="The bash script to run (non-interactive; stdin is empty).")
    display_name: str = Field(
        description="A short human-readable name for this command, such as 'Unit tests'."
    )
    timeout_secs: float | None = Field(
        default=None,
        gt=0,
        description=(
            f"Seconds before the command and everything it started are killed. "
            f"Default {DEFAULT_TIMEOUT_S:.0f}, at most {MAX_TIMEOUT_S:.0f}. Start small; raise "
            "it on a retry. In the background it is the process's lifetime (default "
            f"{BACKGROUND_DEFAULT_LIFETIME_S:.0f}, at most {BACKGROUND_MAX_LIFETIME_S:.0f})."
        ),
    )
    run_in_background: bool | None = Field(
        default=None,
        description=(
            "Start the command and return at once with a taskId (`bash:<id>`), for things that "
            "run longer than a few seconds (dev servers, builds, watchers). Read its new output "
            "with task_await (each read returns only what arrived since the last one, and the "
            "exit status once it ended), stop it with task_stop, list running ones with "
            "task_list. It is killed when its lifetime (timeout_secs) runs out or the session "
            "closes. It never wakes you on its own, and it has no stdin. Do not call task_await "
            "for it in the same batch of tool calls that starts it."
        ),
    )
    sandbox_escalation: str | None = Field(
        default=None,
        max_length=500,
        description=(
            "Only after this command failed because xum's sandbox denied it (a 'Read-only file "
            "system' error on a write the task needs): one sentence saying why it must run "
            "outside the sandbox. The user is asked to approve; if they do, this one call runs "
            "outside it. Do not set it otherwise."
        ),
    )
