"""`xum run`: one request to completion, for scripts and CI.

Exit codes: 0 success (or the code the agent chose with `set_exit_code`), 1 operational, model or
tool error (usage errors too, so that 2 always means the budget), 2 budget exceeded, 130
interrupted. With `--json` every engine event is an NDJSON line and the run ends with exactly one
terminal event, whatever happens (bad flags, a provider error, a bug): `final` when a turn ran,
`error` when none could; both carry `reason` and `exit_code`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from xum.core.errors import XumError
from xum.core.paths import config_path
from xum.runtime.sandbox import SANDBOX_MODES
from xum.workspaces.safety import PERMISSION_MODES, SafetyChoice

if TYPE_CHECKING:
    from xum.cli.render import Renderer
    from xum.runtime.git import WorkTreeQuery
    from xum.runtime.sandbox import SandboxMode
    from xum.workspaces.init_hook import InitHookRun
    from xum.workspaces.safety import ApprovalPolicy, PermissionMode

EXIT_OK, EXIT_ERROR, EXIT_BUDGET, EXIT_INTERRUPTED = 0, 1, 2, 130


class InternalError(XumError):
    """Something xum did not expect; the traceback goes to stderr."""

    code = "internal_error"


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


class RuntimeSpec(click.ParamType[str]):
    """`local`, `worktree` or `ssh <host>` (one argument: quote it)."""

    name = "local|worktree|ssh <host>"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from xum.workspaces.runtime_spec import parse_runtime

        try:
            kind, host = parse_runtime(str(value))
        except XumError as exc:
            self.fail(f"{exc.message} ({exc.hint})" if exc.hint else exc.message, param, ctx)
        return kind if host is None else f"ssh {host}"


@dataclass
class RunOutcome:
    """How a run ended: the process exit code, the reason, and the final event's fields; or,
    for a run that could not run a turn, the error that stopped it."""

    exit_code: int
    reason: str
    extra: dict[str, Any] = field(default_factory=dict)
    failure: XumError | None = None

    @classmethod
    def failed(
        cls, error: XumError, exit_code: int = EXIT_ERROR, reason: str = "error"
    ) -> RunOutcome:
        return cls(exit_code, reason, failure=error)

    def terminal_event(self, elapsed_s: float) -> dict[str, Any]:
        """The last line of `--json` output: `error` when no turn ran, else `final`."""
        head = {
            "reason": self.reason,
            "exit_code": self.exit_code,
            "duration_s": round(elapsed_s, 3),
        }
        if self.failure is not None:
            return {"type": "error", **head, **self.failure.to_dict()}
        return {"type": "final", **head, **self.extra}


def _read_message(words: tuple[str, ...]) -> str:
    if words:
        return " ".join(words)
    if not sys.stdin.isatty():
        return sys.stdin.read()
    return ""


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
@click.option(
    "--dir",
    "-d",
    "directory",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=".",
    help="Project directory (default: the current directory).",
)
@click.option(
    "--model", "-m", help="Model alias or provider:model-id (default: the default model)."
)
@click.option(
    "--runtime",
    "-r",
    type=RuntimeSpec(),
    default="local",
    show_default=True,
    help="local runs in the directory; worktree in a new git worktree and branch under "
    '$XUM_ROOT/src; "ssh <host>" on a remote host (a git archive of HEAD goes there).',
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
    "escalations and edits outside the workspace need approval; read-only: no file changes, "
    "commands only in the read-only sandbox (default: the workspace's, else auto).",
)
@click.option(
    "--approval",
    type=click.Choice(["never", "deny"]),
    default="never",
    show_default=True,
    help="Nobody answers approvals in a run. never: permissions are auto (what needs a person "
    "in every mode, critical commands and escalations, is refused); deny: the --permissions "
    "mode applies and every request it makes is refused. Refusals are tool errors the model "
    "sees.",
)
@click.option("--json", "as_json", is_flag=True, help="Write every event as an NDJSON line.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the final answer.")
def run(
    message: tuple[str, ...],
    directory: Path,
    model: str | None,
    runtime: str,
    mode: str,
    thinking: str | None,
    budget: str | None,
    sandbox: str | None,
    permissions: str | None,
    approval: str,
    as_json: bool,
    quiet: bool,
) -> None:
    """Run one agent task to completion in a project and exit.

    The message comes from the arguments or, when there are none, from stdin.
    """
    from xum.cli.render import JsonRenderer, QuietRenderer, TextRenderer, usage_line
    from xum.runtime.git import WorkTreeQuery

    renderer: Renderer = JsonRenderer() if as_json else QuietRenderer() if quiet else TextRenderer()
    started = time.monotonic()
    try:
        text = _read_message(message).strip()
        if not text:
            raise XumError(
                "no message: pass it as an argument or on stdin",
                hint='xum run "Fix the failing tests"   or   xum run < prompt.md',
            )
        # Where the project is (git) is asked now and read when the workspace is created: the
        # git process runs while the rest of xum is imported.
        project = WorkTreeQuery(directory.resolve())
        outcome = asyncio.run(
            _run(
                text,
                directory,
                model,
                runtime,
                mode,
                thinking,
                _budget(budget),
                renderer,
                project,
                safety=SafetyChoice(
                    sandbox=cast("SandboxMode | None", sandbox),
                    permissions=cast("PermissionMode | None", permissions),
                    approval=cast("ApprovalPolicy", approval),
                ),
            )
        )
    except click.BadParameter as exc:
        budget_error = XumError(f"--budget: {exc.message}", hint="give it in USD: -b 2.00")
        outcome = RunOutcome.failed(budget_error)
    except XumError as exc:
        outcome = RunOutcome.failed(exc)
    except KeyboardInterrupt:  # Ctrl-C before the turn began (its own handler comes later)
        stopped = XumError("interrupted while starting, before a turn ran", hint="run it again")
        outcome = RunOutcome.failed(stopped, EXIT_INTERRUPTED, "interrupted")
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
    if quiet and outcome.exit_code not in (EXIT_OK, EXIT_INTERRUPTED) and outcome.reason != "error":
        click.echo(f"stopped: {outcome.reason}", err=True)
    if not as_json and outcome.extra.get("plan_path"):
        click.echo(f"plan: {outcome.extra['plan_path']}", err=True)
    if quiet and outcome.extra.get("text"):
        sys.stdout.write(outcome.extra["text"].rstrip("\n") + "\n")
    if isinstance(renderer, JsonRenderer):
        renderer.terminal(outcome.terminal_event(elapsed))
    _exit_now(outcome.exit_code)


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


async def _run(
    text: str,
    directory: Path,
    model: str | None,
    runtime_name: str,
    mode: str,
    thinking_text: str | None,
    budget: float | None,
    renderer: Renderer,
    project: WorkTreeQuery | None = None,
    *,
    safety: SafetyChoice | None = None,
) -> RunOutcome:
    from xum.engine.route import resolve_route
    from xum.llm.http import prewarm
    from xum.llm.thinking import DEFAULT_THINKING, parse_thinking
    from xum.store.config import load_config
    from xum.store.providers import load_providers
    from xum.workspaces.lifecycle import create_workspace

    # A one-shot `/<alias>+<level> message` picks the model and thinking of this run.
    text, model, thinking_text = _one_shot_override(text, model, thinking_text)
    # The agent's own defaults (frontmatter `ai:`) come after the flags and the environment.
    agent_model, agent_thinking = None, None
    if model is None or (thinking_text is None and not os.environ.get("XUM_THINKING_LEVEL")):
        from xum.context.workspace import agent_ai_defaults

        agent_model, agent_thinking = await agent_ai_defaults(str(directory), mode)
    # Everything that can fail on configuration is resolved before anything is written.
    # config.json is read once, for the route and the sub-agent settings.
    providers, config = load_providers(), load_config()
    route = resolve_route(model or agent_model, providers=providers, config=config)
    prewarm(route.endpoint.base_url)  # overlaps the setup below
    thinking = parse_thinking(
        thinking_text or os.environ.get("XUM_THINKING_LEVEL") or agent_thinking or DEFAULT_THINKING,
        route.provider,
        route.model_id,
    )
    if budget is not None and route.price is None:
        raise XumError(
            f"{route.model_string} has no known price, so a --budget cannot be enforced",
            hint=f'pick a priced model, or add its price under "modelPrices" in {config_path()} '
            '(e.g. {"modelPrices": {"' + route.model_string + '": {"input": 3, "output": 15}}}, '
            "USD per million tokens)",
        )

    # The workspace is made on a worker thread (git, the registry write and its fsyncs) while
    # this one imports the engine.
    creating = asyncio.ensure_future(
        create_workspace(
            directory,
            runtime_name,
            name_hint=" ".join(text.split()[:4]),
            title=" ".join(text.split())[:80],
            on_init_line=_init_line_sink(renderer),
            model=route.model_string,
            thinking=thinking,
            agent=mode,
            project_query=project,
        )
    )
    await asyncio.sleep(0)  # let it start its thread
    from xum.workspaces.assembly import open_workspace_session
    from xum.workspaces.subagent_host import TaskSettings

    created = await creating
    record = created.record
    exit_choice: dict[str, Any] = {}

    def set_exit_code(code: int, reason: str) -> None:
        exit_choice.update(code=code, reason=reason)

    # Secrets, hooks (trusted projects only), masking, a sub-agent host made on first use (its
    # children's events are not rendered: their logs keep them); notices go to the renderer. The
    # run owns the workspace until it exits, so the session keeps the writer lock.
    try:
        opened = await open_workspace_session(
            record,
            route=route,
            thinking=thinking,
            emit=renderer,
            created=created,
            budget_usd=budget,
            set_exit_code=set_exit_code,
            task_settings=TaskSettings.from_config(config),
            purpose="run",
            hold_writer=True,
            safety=safety or SafetyChoice(),
        )
    except BaseException:
        if created.init is not None:
            created.init.cancel()
        await created.runtime.close()
        raise
    session = opened.agent

    loop = asyncio.get_running_loop()
    interrupts = 0

    def on_sigint() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts >= 2:
            # Leave now: the log is durable as it stands (the next open closes the turn), and
            # the commands this run started go with it.
            from xum.runtime.process import kill_child_groups

            kill_child_groups()
            os._exit(EXIT_INTERRUPTED)
        session.interrupt()

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    try:
        result = await session.run_turn(text)
        if created.init is not None and result.reason != "interrupted":
            await _finish_init(created.init, renderer)
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        if created.init is not None:
            created.init.cancel()  # a no-op unless the run failed or was interrupted
        # Children and background processes end with the run: nothing outlives it.
        await opened.aclose()

    extra: dict[str, Any] = {
        "workspace_id": record.id,
        "workspace_name": record.name,
        "workspace_path": record.path,
        "model": route.model_string,
        "text": result.text,
        "steps": result.steps,
        "usage": result.usage.to_dict(),
        "cost_usd": result.cost_usd,
        "agent": result.agent,
    }
    if result.plan_file is not None:
        extra["plan_path"] = result.plan_file
        extra["plan_proposed"] = result.plan_proposed
    if result.reason == "budget":
        extra["limit"] = {"kind": "session_budget", "budget_usd": budget}
    if result.error:
        extra["error"] = result.error
    if exit_choice:
        extra["agent_exit_code"] = exit_choice
    code = {
        "completed": EXIT_OK,
        "interrupted": EXIT_INTERRUPTED,
        "budget": EXIT_BUDGET,
    }.get(result.reason, EXIT_ERROR)
    if code == EXIT_OK and exit_choice:
        code = int(exit_choice["code"])
    return RunOutcome(code, result.reason, extra)


def _one_shot_override(
    text: str, model: str | None, thinking: str | None
) -> tuple[str, str | None, str | None]:
    """`/sonnet+high fix it` -> ("fix it", "sonnet", "high"); the flags are the fallback."""
    if not text.startswith("/"):
        return text, model, thinking
    from xum.context.slash import SlashError, parse_command, parse_override
    from xum.core.errors import UsageError
    from xum.engine.userinput import chat_command_refusal
    from xum.llm.catalog import aliases

    try:
        command = parse_command(text)
        if command is not None:
            raise chat_command_refusal(command)
        override = parse_override(text, set(aliases()))
    except SlashError as exc:
        raise UsageError(str(exc)) from None
    if override is None:
        return text, model, thinking
    return override.text, override.model or model, override.thinking or thinking


def _init_line_sink(renderer: Renderer) -> Callable[[str], None] | None:
    """How `.xum/init` output is shown: an `init-output` event per line with --json, dimmed
    lines on stderr in text mode, nothing with --quiet."""
    from xum.cli.render import JsonRenderer, TextRenderer
    from xum.engine import events as E

    if isinstance(renderer, JsonRenderer | TextRenderer):
        return lambda line: renderer(E.InitOutput(line=line))
    return None


async def _finish_init(init: InitHookRun, renderer: Renderer) -> None:
    """A one-shot run ends with its workspace set up: wait for the init hook if it still runs."""
    from xum.engine import events as E

    if not init.done:
        renderer(
            E.Advisory(kind="init-hook-wait", message=f"waiting for {init.hook.display} to finish")
        )
    status = await init.wait()
    renderer(E.InitEnd(status=status, exit_code=init.exit_code))
