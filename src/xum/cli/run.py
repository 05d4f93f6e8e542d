"""`xum run`: one request to completion, for scripts and CI (the flags and the way out; what
happens in between is `run_flow`).

Exit codes (`run_outcome`): 0 success (a goal run: the goal is complete; or the code the agent
chose with `set_exit_code`), 1 operational, model or tool error (usage errors too, so that 2
always means the budget), 2 budget exceeded, 3 a goal run stopped at a goal limit with its goal
incomplete, 130 interrupted. With `--json` every engine event is an NDJSON line and the run ends
with exactly one terminal event, whatever happens (bad flags, a provider error, a bug): `final`
when a turn ran, `error` when none could; both carry `reason` and `exit_code`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from xum.cli.options import dir_option, runtime_option
from xum.cli.run_outcome import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    InternalError,
    RunOutcome,
    limit_line,
)
from xum.core.errors import XumError
from xum.runtime.sandbox_settings import SANDBOX_MODES
from xum.workspaces.safety.choice import PERMISSION_MODES, SafetyChoice

if TYPE_CHECKING:
    from xum.cli.render import Renderer
    from xum.runtime.sandbox_settings import SandboxMode
    from xum.workspaces.safety.choice import ApprovalPolicy, PermissionMode


class RunCommand(click.Command):
    """Usage errors exit 1 (not click's 2): for `xum run`, 2 means the budget was exceeded.
    With `--json` a usage error is the run's one terminal `error` event."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        as_json = _wants_json(args)  # before parsing, which consumes `args`
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            if as_json:
                from xum.cli.render import JsonRenderer
                from xum.core.errors import UsageError

                usage = UsageError(exc.format_message(), hint="`xum run --help` lists the options")
                JsonRenderer().terminal(RunOutcome.failed(usage).terminal_event(0.0))
            else:
                exc.show()
            ctx.exit(EXIT_ERROR)


def _wants_json(args: list[str]) -> bool:
    """Whether `--json` is among the options (words after `--` are the message)."""
    options = args[: args.index("--")] if "--" in args else args
    return "--json" in options


def _read_message(words: tuple[str, ...]) -> str:
    if words:
        return " ".join(words)
    if not sys.stdin.isatty():
        return sys.stdin.read()
    return ""


def _goal_budget(value: str | None) -> int | None:
    if value is None:
        return None
    from xum.core.money import parse_cents

    try:
        return parse_cents(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _budget(value: str | None) -> float | None:
    if value is None:
        return None
    text = value.strip().lstrip("$")
    try:
        budget = float(text)
    except ValueError:
        raise click.BadParameter(f"'{value}' is not an amount in USD (e.g. 2.00)") from None
    if budget <= 0:
        raise click.BadParameter("the budget must be more than 0")
    return budget


@click.command(cls=RunCommand)
@click.argument("message", nargs=-1)
@dir_option("Project directory (default: the current directory).")
@click.option(
    "--model", "-m", help="Model alias or provider:model-id (default: the default model)."
)
@runtime_option(
    "local runs in the directory; worktree in a new git worktree and branch under "
    '$XUM_ROOT/src; "ssh <host>" on a remote host (a git archive of HEAD goes there); '
    '"docker <image>" in a new container of the image (a git bundle of HEAD goes to /src); '
    '"devcontainer [<config>]" in a worktree run in the container of the project\'s '
    "devcontainer.json (`devcontainer up`)."
)
@click.option(
    "--mode",
    type=click.Choice(["exec", "plan"]),
    default="exec",
    show_default=True,
    help="exec does the work; plan investigates and writes a plan file for review (its path "
    "is in the final event).",
)
@click.option(
    "--thinking",
    "-t",
    default=None,
    help="off, low, med, high, xhigh, max, or 0-9 relative to the model (default: med).",
)
@click.option(
    "--budget", "-b", default=None, help="Stop once the session costs more than this many USD."
)
@click.option(
    "--goal",
    default=None,
    help="Start a goal run: keep going over automatic continuation turns until the agent "
    "completes this objective or a limit stops it (it is also the message when none is given).",
)
@click.option(
    "--goal-budget",
    default=None,
    help="The goal's own budget ($5, 5.00 or 500c), separate from --budget: past it, one "
    "wrap-up turn, then exit 3.",
)
@click.option(
    "--goal-turns",
    type=click.IntRange(min=1),
    default=None,
    help="The most automatic continuation turns of the goal; then exit 3.",
)
@click.option(
    "--workspace",
    "-w",
    default=None,
    metavar="ID|NAME|last",
    help="Continue an existing workspace's session (its runtime, checkout, agent and model "
    "unless flags say otherwise) instead of creating one; last: the project's newest.",
)
@click.option(
    "--sandbox",
    type=click.Choice(SANDBOX_MODES),
    default=None,
    help="Where commands may write: workspace-write (the checkout, its scratch dir, /tmp), "
    "read-only, off, or auto (workspace-write where bubblewrap works; the default, or "
    'config.json "sandbox"). An explicit mode is fail-closed: without bubblewrap bash refuses.',
)
@click.option(
    "--permissions",
    type=click.Choice(PERMISSION_MODES),
    default=None,
    help="auto: commands run unprompted in the sandbox; ask: commands outside the allowlist, "
    "escalations and edits outside the workspace need approval; read-only: no file changes "
    "whatever --approval and --sandbox say, commands only in the read-only sandbox (refused "
    "without bubblewrap) (default: the workspace's, else auto).",
)
@click.option(
    "--approval",
    type=click.Choice(["never", "deny"]),
    default="never",
    show_default=True,
    help="Nobody answers approvals in a run. never: ask permissions run as auto (what needs a "
    "person in every mode, critical commands and escalations, is refused; read-only stays "
    "read-only); deny: the --permissions mode applies and every request it makes is refused. "
    "Refusals are tool errors the model sees.",
)
@click.option(
    "--external-agent",
    "external_agent",
    default=None,
    metavar="NAME",
    help="Run an external ACP agent (config.json externalAgents, docs/external-agents.md) as "
    "the new workspace's agent instead of xum's own engine, in any runtime.",
)
@click.option("--json", "as_json", is_flag=True, help="Write every event as an NDJSON line.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the final answer.")
@click.pass_context
def run(
    ctx: click.Context,
    message: tuple[str, ...],
    directory: Path,
    model: str | None,
    runtime: str,
    mode: str,
    thinking: str | None,
    budget: str | None,
    goal: str | None,
    goal_budget: str | None,
    goal_turns: int | None,
    workspace: str | None,
    sandbox: str | None,
    permissions: str | None,
    approval: str,
    external_agent: str | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Run one agent task to completion in a project and exit.

    The message comes from the arguments or, when there are none, from stdin (or, for a goal
    run, is the goal itself).
    """
    from xum.cli.render import JsonRenderer, QuietRenderer, TextRenderer, usage_line
    from xum.cli.run_external import execute_run
    from xum.cli.run_flow import RunRequest
    from xum.runtime.git import WorkTreeQuery

    renderer: Renderer = JsonRenderer() if as_json else QuietRenderer() if quiet else TextRenderer()
    started = time.monotonic()
    explicit = click.core.ParameterSource.COMMANDLINE
    try:
        text = _read_message(message).strip()
        if not text and goal is None:
            raise XumError(
                "no message: pass it as an argument or on stdin",
                hint='xum run "Fix the failing tests"   or   xum run < prompt.md',
            )
        request = RunRequest(
            text=text,
            directory=directory,
            model=model,
            runtime=runtime,
            runtime_given=ctx.get_parameter_source("runtime") == explicit,
            mode=mode,
            mode_given=ctx.get_parameter_source("mode") == explicit,
            thinking=thinking,
            budget=_budget(budget),
            renderer=renderer,
            workspace=workspace,
            goal=goal,
            goal_budget_cents=_checked(_goal_budget, goal_budget, "--goal-budget"),
            goal_turns=goal_turns,
            external_agent=external_agent,
            flags_given=_given(ctx, ("model", "thinking", "budget")),
            safety=SafetyChoice(
                sandbox=cast("SandboxMode | None", sandbox),
                permissions=cast("PermissionMode | None", permissions),
                approval=cast("ApprovalPolicy", approval),
            ),
        )
        # Where the project is (git) is asked now and read when the workspace is created: the
        # git process runs while the rest of xum is imported.
        if workspace is None:
            request.project = WorkTreeQuery(directory.resolve())
        outcome = asyncio.run(execute_run(request))
    except click.BadParameter as exc:
        flag = exc.param_hint if isinstance(exc.param_hint, str) else "--budget"
        hint = "give it in USD: -b 2.00" if flag == "--budget" else "e.g. --goal-budget 5.00"
        outcome = RunOutcome.failed(XumError(f"{flag}: {exc.message}", hint=hint))
    except XumError as exc:
        if exc.code == "held_turn_stopped":  # Ctrl-C while the fleet budget held the turn
            outcome = RunOutcome.failed(exc, EXIT_INTERRUPTED, "interrupted")
        else:
            outcome = RunOutcome.failed(exc)
    except KeyboardInterrupt:  # Ctrl-C before the turn began (its own handler comes later)
        early = XumError("interrupted while starting, before a turn ran", hint="run it again")
        outcome = RunOutcome.failed(early, EXIT_INTERRUPTED, "interrupted")
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        outcome = RunOutcome.failed(_unexpected(exc))
    elapsed = time.monotonic() - started
    if outcome.failure is not None and not as_json:
        click.echo(f"error: {outcome.failure.message}", err=True)
        if outcome.failure.hint:
            click.echo(f"  hint: {outcome.failure.hint}", err=True)
    if "usage" in outcome.extra:
        renderer.finish(usage_line(outcome.reason, outcome.extra, elapsed))
    stopped = limit_line(outcome.extra)
    if stopped is not None and not as_json:
        click.echo(stopped, err=True)
    elif (
        quiet and outcome.exit_code not in (EXIT_OK, EXIT_INTERRUPTED) and outcome.reason != "error"
    ):
        click.echo(f"stopped: {outcome.reason}", err=True)
    if not as_json and outcome.extra.get("plan_path"):
        click.echo(f"plan: {outcome.extra['plan_path']}", err=True)
    if quiet and outcome.extra.get("text"):
        sys.stdout.write(outcome.extra["text"].rstrip("\n") + "\n")
    if isinstance(renderer, JsonRenderer):
        renderer.terminal(outcome.terminal_event(elapsed))
    _exit_now(outcome.exit_code)


def _given(ctx: click.Context, names: tuple[str, ...]) -> tuple[str, ...]:
    """The options of `names` given on the command line, as flags (`--model`)."""
    explicit = click.core.ParameterSource.COMMANDLINE
    return tuple(f"--{n}" for n in names if ctx.get_parameter_source(n) == explicit)


def _checked(parse: Any, value: str | None, flag: str) -> Any:
    """`parse(value)`, with a BadParameter naming `flag`."""
    try:
        return parse(value)
    except click.BadParameter as exc:
        exc.param_hint = flag
        raise


def _exit_now(code: int) -> None:
    """Exit without the interpreter's teardown. By now the session log is durable and closed,
    the runtime and the children are stopped and the output is flushed; what remains
    (finalizing every module and object) took 30-60 ms after the last reply and serves no one.
    A script waiting on `xum run` gets its exit code that much sooner."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _unexpected(exc: Exception) -> XumError:
    """An exception xum did not anticipate, worded for the user (the traceback is on stderr)."""
    if isinstance(exc, OSError) and exc.filename:
        return InternalError(
            f"cannot use {exc.filename}: {exc.strerror or exc}",
            hint="check that the path exists, is the right kind (file or directory) and is "
            "writable; `xum doctor` checks $XUM_ROOT",
        )
    return InternalError(
        f"unexpected error: {type(exc).__name__}: {exc}",
        hint="this is a bug in xum; please report it with the traceback printed on stderr",
    )
