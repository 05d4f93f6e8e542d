"""bash: run a script in the workspace, output bounded and spilled to a file (on the SSH host
for SSH workspaces, so the model can read it where it runs).

While it runs, the merged output also goes to the call's live stream (`ctx.open_output`):
"output" for a foreground command, closed before the result is made; for a background one the
stream is named by its taskId (`bash:<id>`) and stays open until the process ends."""

from __future__ import annotations

import shlex
import signal as signals
from typing import TYPE_CHECKING, Any, ClassVar

from xum.tools.base import Tool, ToolContext, ToolResult, error, filtered, input_model
from xum.tools.bgmonitor import MonitorSpec, parse_monitor
from xum.tools.bounds import HeadTailCapture, new_spill_path

if TYPE_CHECKING:
    from xum.tools.bash_input import BashInput
    from xum.tools.input import ToolInput

DEFAULT_TIMEOUT_S = 120.0
MAX_TIMEOUT_S = 3600.0
BACKGROUND_DEFAULT_LIFETIME_S = 3600.0
BACKGROUND_MAX_LIFETIME_S = 86400.0


class BashTool(Tool):
    name = "bash"
    description = (
        "Run a bash script in the workspace directory and return its combined stdout and "
        "stderr with the exit code. Commands run non-interactively (no stdin, no TTY); "
        "the whole process tree is killed on timeout or interrupt. Long output keeps its first "
        "and last 16 KiB, and the full output is saved to a file named in the result (read it "
        "with file_read, or grep/tail it). Prefer file_read and the file_edit tools for reading "
        "and changing files; use bash for builds, tests, git, search (rg/grep) and anything "
        "else a shell does. Set run_in_background for servers, watchers and long builds."
    )
    # Its pydantic model is imported only when needed (xum.tools.plain_args checks plain calls).
    Input: ClassVar[type[ToolInput]] = input_model("xum.tools.bash_input:BashInput")
    read_only = False
    risk = "execute"
    warm = (
        "xum.tools.command_risk",
        "xum.tools.shell_parse:warm_parser",
        "xum.runtime.sandbox",
        "xum.runtime.process",
    )

    def summary(self, args: BashInput) -> str:
        first_line = args.script.strip().splitlines()[0] if args.script.strip() else ""
        return args.display_name or first_line[:80]

    async def run(self, args: BashInput, ctx: ToolContext) -> ToolResult:
        if args.run_in_background:
            return self._start_background(args, ctx)
        if args.monitor is not None:
            return error(
                "monitor only applies to a background command: set run_in_background true, "
                "or leave monitor out"
            )
        notes: list[str] = []
        timeout = args.timeout_secs or DEFAULT_TIMEOUT_S
        if timeout > MAX_TIMEOUT_S:
            notes.append(f"timeout_secs {timeout:g} is above the maximum; used {MAX_TIMEOUT_S:.0f}")
            timeout = MAX_TIMEOUT_S
        capture = HeadTailCapture(new_spill_path(ctx.scratch_dir), spill_cap=ctx.runtime.spill_cap)
        live = ctx.open_output("output") if ctx.open_output is not None else None
        kept = filtered(ctx, capture.feed)  # masked before it reaches the spill file

        def on_output(chunk: bytes) -> None:
            kept.write(chunk)
            if live is not None:
                live.write(chunk)

        try:
            result = await ctx.runtime.exec(
                with_env_source(ctx, args.script),
                env=ctx.env,
                timeout_s=timeout,
                on_output=on_output,
            )
        except (FileNotFoundError, NotADirectoryError, PermissionError) as exc:
            return error(
                f"could not start bash in {ctx.runtime.workspace_path}: {exc.strerror or exc}"
            )
        finally:
            kept.close()  # what the filter held back (a possible start of a secret)
            capture.close()
            if live is not None:  # flushes what masking or decoding held back
                live.close()
        # The spill file goes where file_read looks (on SSH: the host).
        await capture.publish(ctx.runtime)

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

    def _start_background(self, args: BashInput, ctx: ToolContext) -> ToolResult:
        if ctx.background is None:
            return error("background commands are not available in this session")
        notes: list[str] = []
        lifetime = args.timeout_secs or BACKGROUND_DEFAULT_LIFETIME_S
        if lifetime > BACKGROUND_MAX_LIFETIME_S:
            notes.append(
                f"timeout_secs {lifetime:g} is above the maximum lifetime; used "
                f"{BACKGROUND_MAX_LIFETIME_S:.0f}"
            )
            lifetime = BACKGROUND_MAX_LIFETIME_S
        spec: MonitorSpec | None = None
        if args.monitor is not None:
            m = args.monitor
            try:
                spec = parse_monitor(
                    m.filter, m.filter_exclude, m.cooldown_ms, m.max_events, m.wake_on_exit
                )
            except ValueError as exc:
                return error(str(exc))
            if not ctx.background.can_wake:
                # Nobody here starts a turn for it (`xum run` ends with its turn; sub-agents).
                notes.append(
                    "monitor ignored: this session is not woken by background processes; read "
                    "the output with bash_output when you need it"
                )
                spec = None
        try:
            proc = ctx.background.start(
                ctx.runtime,
                with_env_source(ctx, args.script),
                env=ctx.env,
                display_name=args.display_name,
                timeout_s=lifetime,
                open_output=ctx.open_output,
                output_filter=ctx.output_filter,
                monitor=spec,
                command=args.script,
            )
        except RuntimeError as exc:
            return error(f"could not start the background command: {exc}")
        lines = [
            f"Started in the background: taskId {proc.task_id}, backgroundProcessId "
            f"{proc.process_id} ({args.display_name}).",
            f"It will be killed after {lifetime:g} s. Read its output with bash_output "
            f'(process_id "{proc.process_id}") or task_await; stop it with '
            "bash_background_terminate or task_stop.",
        ]
        if spec is not None:
            lines.append(
                f"Monitored: {spec.describe()} will wake this workspace with a new turn, also "
                "after your response ends; no need to poll."
            )
        lines.extend(f"[note: {note}]" for note in notes)
        return ToolResult(
            output="\n".join(lines),
            meta={
                "taskId": proc.task_id,
                "backgroundProcessId": proc.process_id,
                "display_name": args.display_name,
                "lifetime_s": lifetime,
                "monitored": spec is not None,
            },
        )


def __getattr__(name: str) -> Any:
    # `from xum.tools.bash import BashInput` (and BashMonitor) keeps working; importing this module stays free of
    # pydantic.
    if name in ("BashInput", "BashMonitor"):
        from xum.tools import bash_input

        return getattr(bash_input, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def with_env_source(ctx: ToolContext, script: str) -> str:
    """The script, preceded by sourcing `.xum/tool_env` (ctx.env_source) in the same shell, so
    what it sets up (direnv, nvm, a virtualenv) is in effect for the script."""
    if not ctx.env_source:
        return script
    return f". {shlex.quote(ctx.env_source)}\n{script}"


def _signal_name(number: int) -> str:
    try:
        return f"{signals.Signals(number).name} ({number})"
    except ValueError:
        return str(number)


def _signal_note(number: int | None) -> str:
    return f" (ended by {_signal_name(number)})" if number is not None else ""
