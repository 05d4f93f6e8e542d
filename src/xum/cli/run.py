"""`xum run`: one request to completion, for scripts and CI.

Exit codes: 0 success (or the code the agent chose with `set_exit_code`), 1 operational, model or
tool error (usage errors too, so that 2 always means the budget), 2 budget exceeded, 130
interrupted. With `--json` every engine event is an NDJSON line and the run ends with exactly one
terminal event: `final` or `error`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from xum.core.errors import XumError

EXIT_OK, EXIT_ERROR, EXIT_BUDGET, EXIT_INTERRUPTED = 0, 1, 2, 130

READ_ONLY_TOOLS = ["file_read", "todo_write", "todo_read", "web_fetch"]
EXEC_TOOLS = [
    "bash",
    "file_read",
    "file_edit_replace_string",
    "file_edit_replace_lines",
    "file_edit_insert",
    "todo_write",
    "todo_read",
    "web_fetch",
    "set_exit_code",
]
PLAN_MODE_NOTICE = (
    "plan mode is limited for now: the agent gets read-only tools (file_read, todo_*, web_fetch) "
    "and answers with a plan; plan files and propose_plan are not implemented yet"
)


class RunCommand(click.Command):
    """Usage errors exit 1 (not click's 2): for `xum run`, 2 means the budget was exceeded."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            exc.show()
            ctx.exit(EXIT_ERROR)


@dataclass
class RunOutcome:
    exit_code: int
    reason: str
    extra: dict[str, Any] = field(default_factory=dict)


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
    type=click.Choice(["local", "worktree"]),
    default="local",
    show_default=True,
    help="local runs in the directory; worktree in a new git worktree and branch under $XUM_ROOT/src.",
)
@click.option(
    "--mode",
    type=click.Choice(["exec", "plan"]),
    default="exec",
    show_default=True,
    help="exec does the work; plan only investigates and answers with a plan.",
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
    as_json: bool,
    quiet: bool,
) -> None:
    """Run one agent task to completion in a project and exit.

    The message comes from the arguments or, when there are none, from stdin.
    """
    from xum.cli.render import JsonRenderer, QuietRenderer, TextRenderer, usage_line

    renderer: Any = JsonRenderer() if as_json else QuietRenderer() if quiet else TextRenderer()
    started = time.monotonic()
    try:
        text = _read_message(message).strip()
        if not text:
            raise XumError(
                "no message: pass it as an argument or on stdin",
                hint='xum run "Fix the failing tests"   or   xum run < prompt.md',
            )
        outcome = asyncio.run(
            _run(text, directory, model, runtime, mode, thinking, _budget(budget), renderer)
        )
    except click.BadParameter as exc:
        outcome = _failure(renderer, as_json, XumError(f"--budget: {exc.message}"))
    except XumError as exc:
        outcome = _failure(renderer, as_json, exc)
    elapsed = time.monotonic() - started
    if "usage" in outcome.extra:
        renderer.finish(usage_line(outcome.reason, outcome.extra, elapsed))
    if quiet and outcome.exit_code not in (EXIT_OK, EXIT_INTERRUPTED) and outcome.reason != "error":
        click.echo(f"stopped: {outcome.reason}", err=True)
    if quiet and outcome.extra.get("text"):
        sys.stdout.write(outcome.extra["text"].rstrip("\n") + "\n")
    if as_json and outcome.reason != "error":
        renderer(
            {
                "type": "final",
                "reason": outcome.reason,
                "exit_code": outcome.exit_code,
                "duration_s": round(elapsed, 3),
                **outcome.extra,
            }
        )
    sys.stdout.flush()
    sys.exit(outcome.exit_code)


def _failure(renderer: Any, as_json: bool, exc: XumError) -> RunOutcome:
    if as_json:
        renderer({"type": "error", "exit_code": EXIT_ERROR, **exc.to_dict()})
    else:
        click.echo(f"error: {exc.message}", err=True)
        if exc.hint:
            click.echo(f"  hint: {exc.hint}", err=True)
    return RunOutcome(EXIT_ERROR, "error")


async def _run(
    text: str,
    directory: Path,
    model: str | None,
    runtime_name: str,
    mode: str,
    thinking_text: str | None,
    budget: float | None,
    renderer: Any,
) -> RunOutcome:
    from xum.context.system_prompt import build_system_prompt
    from xum.engine.route import resolve_route
    from xum.engine.session import AgentSession, SessionSettings, WorkspaceInfo
    from xum.llm.client import open_client
    from xum.llm.http import prewarm
    from xum.llm.thinking import DEFAULT_THINKING, parse_thinking
    from xum.runtime import git
    from xum.store.sessionlog import SessionLog
    from xum.workspaces.service import create_workspace, scratch_dir

    # Everything that can fail on configuration is resolved before anything is written.
    route = resolve_route(model)
    prewarm(route.endpoint.base_url.startswith("https://"))  # overlaps the setup below
    thinking = parse_thinking(
        thinking_text or os.environ.get("XUM_THINKING_LEVEL") or DEFAULT_THINKING,
        route.provider,
        route.model_id,
    )
    if budget is not None and route.price is None:
        raise XumError(
            f"{route.model_string} has no known price, so a --budget cannot be enforced",
            hint='pick a priced model, or add its price under "modelPrices" in ~/.xum/config.json '
            '(e.g. {"modelPrices": {"' + route.model_string + '": {"input": 3, "output": 15}}}, '
            "USD per million tokens)",
        )
    if mode == "plan":
        renderer({"type": "advisory", "kind": "plan-mode-limited", "message": PLAN_MODE_NOTICE})

    record, runtime = create_workspace(
        directory,
        "worktree" if runtime_name == "worktree" else "local",
        name_hint=" ".join(text.split()[:4]),
        title=" ".join(text.split())[:80],
        model=route.model_string,
        thinking=thinking,
        agent=mode,
    )
    exit_choice: dict[str, Any] = {}

    def set_exit_code(code: int, reason: str) -> None:
        exit_choice.update(code=code, reason=reason)

    client = open_client(route.endpoint)
    log = SessionLog.open(record.id, purpose="xum run")
    session = AgentSession(
        workspace=WorkspaceInfo(
            record.id, record.name, record.project_path, record.path, runtime.kind
        ),
        log=log,
        runtime=runtime,
        route=route,
        client=client,
        settings=SessionSettings(
            system_prompt=build_system_prompt(
                runtime.kind, is_git=git.toplevel(Path(record.path)) is not None, mode=mode
            ),
            tools=READ_ONLY_TOOLS if mode == "plan" else EXEC_TOOLS,
            thinking=thinking,
            budget_usd=budget,
            mode=mode,
        ),
        scratch_dir=scratch_dir(record.id),
        emit=renderer,
        set_exit_code=set_exit_code,
    )

    loop = asyncio.get_running_loop()
    interrupts = 0

    def on_sigint() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts >= 2:
            os._exit(EXIT_INTERRUPTED)  # the log is already durable; leave now
        session.interrupt()

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    try:
        result = await session.run_turn(text)
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        await client.aclose()
        await runtime.close()
        log.close()

    extra: dict[str, Any] = {
        "workspace_id": record.id,
        "workspace_name": record.name,
        "workspace_path": record.path,
        "model": route.model_string,
        "text": result.text,
        "steps": result.steps,
        "usage": result.usage.to_dict(),
        "cost_usd": result.cost_usd,
    }
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
