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


class BashMonitor(ToolInput):
    filter: str | None = Field(
        default=None,
        description="Regex tested against each complete output line; a match wakes you.",
    )
    filter_exclude: bool | None = Field(
        default=None,
        description="When true, lines that do NOT match filter wake you. Needs filter.",
    )
    cooldown_ms: float | None = Field(
        default=None,
        ge=0,
        description=(
            "Milliseconds to gather matching lines into one wake-up after the first one "
            "(default 1000)."
        ),
    )
    max_events: int | None = Field(
        default=None,
        ge=1,
        description=(
            "Stop watching after this many matching lines (the process keeps running); a "
            "monitor retired this way does not wake you when the process ends either."
        ),
    )
    wake_on_exit: bool | None = Field(
        default=None,
        description=(
            "Also wake when the process ends (exit, kill, lifetime), even if no line matched "
            "(default true). An explicit stop never wakes."
        ),
    )


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
            "Start the command and return at once with a taskId (`bash:<id>`) and a "
            "backgroundProcessId, for things that run longer than a few seconds (dev servers, "
            "builds, watchers). Read its new output with bash_output (with a line filter and a "
            "wait) or task_await (each read returns only what arrived since the last one, and "
            "the exit status once it ended); stop it with bash_background_terminate or "
            "task_stop; list running ones with task_list. It is killed when its lifetime "
            "(timeout_secs) runs out or the session closes, and it has no stdin. Without a "
            "monitor it never wakes you: read it when you need its output, without polling. "
            "With a monitor, its matching lines and its end wake this workspace with a new "
            "turn, also after your current response. Before you finish, stop what you no "
            "longer need so stale output cannot start a turn. Do not read it in the same "
            "batch of tool calls that starts it."
        ),
    )
    monitor: BashMonitor | None = Field(
        default=None,
        description=(
            "Only with run_in_background: wake this workspace when the process prints lines "
            "matching filter (coalesced over cooldown_ms) and when it ends (exit, kill, "
            "lifetime; unless wake_on_exit is false). Stopping it with task_stop or "
            "bash_background_terminate wakes nobody."
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
