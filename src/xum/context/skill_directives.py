"""Skill dynamic context: ``!`command` `` lines of a skill the user invokes, replaced by the
command's output (the `skillDynamicContext` experiment, `xum.context.experiments`).

A directive is a line whose whole content (surrounding spaces aside) is ``!`command` ``; one in
the middle of a line is text. When the user invokes a skill (`/<name> args`, after argument
substitution, or a `$name` reference), each directive, in order, runs in the workspace and its
line becomes a fenced block with the output. At most MAX_DIRECTIVES per skill run (later ones are
replaced by a note), each with a TIMEOUT_S timeout and its output cut at MAX_OUTPUT_BYTES; a
command that fails shows its output and an `[exit code N]` note, and the invocation goes on.

The model never triggers this: `agent_skill_read` returns the raw body. Who runs the commands
(`SkillCommands`) is the workspace layer's: it decides whether they may run at all (the
experiment is on and the project is trusted), runs them through the workspace's runtime in the
command sandbox, and masks project secrets in the output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

MAX_DIRECTIVES = 10
TIMEOUT_S = 10.0
MAX_OUTPUT_BYTES = 16 * 1024
_DIRECTIVE = re.compile(r"^[ \t]*!`(.+)`[ \t]*$")


@dataclass(frozen=True, slots=True)
class CommandOutput:
    """What a skill's command directive printed and how it ended."""

    text: str  # what the command printed (stdout and stderr), masked, at most MAX_OUTPUT_BYTES
    exit_code: int | None  # None: killed (a signal, the timeout)
    timed_out: bool = False
    truncated: bool = False


class SkillCommands(Protocol):
    """Runs a skill's directives for one workspace (implemented by the workspaces layer)."""

    def enabled(self) -> bool:
        """Whether the user switched the experiment on (off: directives are plain text)."""
        ...

    def refusal(self) -> str | None:
        """With the experiment on: why the commands may not run here (an untrusted project),
        or None when they may."""
        ...

    async def run(self, command: str) -> CommandOutput: ...


def has_directives(body: str) -> bool:
    return "!`" in body and any(_DIRECTIVE.match(line) for line in body.split("\n"))


async def expand_directives(body: str, commands: SkillCommands | None) -> str:
    """`body` with its directives run and replaced (see the module docstring). Unchanged when
    there are none or the experiment is off; when it is on but the commands may not run (an
    untrusted project), each directive line says so instead of running."""
    if commands is None or not has_directives(body) or not commands.enabled():
        return body
    refusal = commands.refusal()
    out: list[str] = []
    ran = 0
    for line in body.split("\n"):
        match = _DIRECTIVE.match(line)
        if match is None:
            out.append(line)
            continue
        command = match.group(1).strip()
        if refusal is not None:
            out.append(f"[xum: `{command}` was not run: {refusal}]")
            continue
        if ran == MAX_DIRECTIVES:
            out.append(f"[xum: `{command}` was not run: at most {MAX_DIRECTIVES} per skill]")
            continue
        ran += 1
        out.append(fenced(await commands.run(command)))
    return "\n".join(out)


def fenced(result: CommandOutput) -> str:
    """A command's output as a fenced block, with notes for a cut, a timeout or a failure."""
    text = result.text.rstrip("\n")
    notes = []
    if result.truncated:
        notes.append(f"[output cut at {MAX_OUTPUT_BYTES // 1024} KB]")
    if result.timed_out:
        notes.append(f"[timed out after {TIMEOUT_S:g} s]")
    elif result.exit_code != 0:
        notes.append(f"[exit code {result.exit_code if result.exit_code is not None else '?'}]")
    if notes:
        text = f"{text}\n{' '.join(notes)}" if text else " ".join(notes)
    # A fence longer than any backtick run inside, so the output cannot close it.
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"
