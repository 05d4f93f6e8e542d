"""bash: run a script in the workspace, output bounded and spilled to a file."""

from __future__ import annotations

import signal as signals
from typing import ClassVar

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.bounds import HeadTailCapture, new_spill_path
from xum.tools.input import ToolInput

DEFAULT_TIMEOUT_S = 120.0
MAX_TIMEOUT_S = 3600.0


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
            "it on a retry."
        ),
    )


class BashTool(Tool):
    name = "bash"
    description = (
        "Run a bash script in the workspace directory and return its combined stdout and "
        "stderr with the exit code. Commands run non-interactively (no stdin, no TTY); "
        "the whole process tree is killed on timeout or interrupt. Long output keeps its first "
        "and last 16 KiB, and the full output is saved to a file named in the result (read it "
        "with file_read, or grep/tail it). Prefer file_read and the file_edit tools for reading "
        "and changing files; use bash for builds, tests, git, search (rg/grep) and anything "
        "else a shell does."
    )
    Input: ClassVar[type[ToolInput]] = BashInput
    read_only = False

    def summary(self, args: BashInput) -> str:
        first_line = args.script.strip().splitlines()[0] if args.script.strip() else ""
        return args.display_name or first_line[:80]

    async def run(self, args: BashInput, ctx: ToolContext) -> ToolResult:
        notes: list[str] = []
        timeout = args.timeout_secs or DEFAULT_TIMEOUT_S
        if timeout > MAX_TIMEOUT_S:
            notes.append(f"timeout_secs {timeout:g} is above the maximum; used {MAX_TIMEOUT_S:.0f}")
            timeout = MAX_TIMEOUT_S
        capture = HeadTailCapture(new_spill_path(ctx.scratch_dir))
        sink = ctx.on_output

        def on_output(chunk: bytes) -> None:
            capture.feed(chunk)
            if sink is not None:
                sink(chunk)

        try:
            result = await ctx.runtime.exec(
                args.script, env=ctx.env, timeout_s=timeout, on_output=on_output
            )
        except (FileNotFoundError, NotADirectoryError, PermissionError) as exc:
            return error(
                f"could not start bash in {ctx.runtime.workspace_path}: {exc.strerror or exc}"
            )
        finally:
            capture.close()

        body = capture.render()
        if result.timed_out:
            status = (
                f"[timed out after {timeout:g} s; the command and its child processes were "
                f"killed{_signal_note(result.signal)}]"
            )
        elif result.signal is not None:
            status = f"[killed by signal {_signal_name(result.signal)}]"
        else:
            status = f"[exit code {result.exit_code}]"
        body = body or "(no output)"
        parts = [body, "" if body.endswith("\n") else "\n", status]
        parts.extend(f"\n[note: {note}]" for note in notes)
        return ToolResult(
            output="".join(parts),
            is_error=result.exit_code != 0,
            meta={
                "exit_code": result.exit_code,
                "signal": result.signal,
                "timed_out": result.timed_out,
                "duration_s": round(result.duration_s, 3),
                "bytes": capture.total,
                "spill_path": capture.spill_path_if_any(),
                "display_name": args.display_name,
            },
        )


def _signal_name(number: int) -> str:
    try:
        return f"{signals.Signals(number).name} ({number})"
    except ValueError:
        return str(number)


def _signal_note(number: int | None) -> str:
    return f" (ended by {_signal_name(number)})" if number is not None else ""
