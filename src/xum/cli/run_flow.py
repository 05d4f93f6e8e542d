"""What `xum run` does once its flags are read: pick the model, thinking level and agent, make
the workspace (or take the one `--workspace` names), hand the message to the workspace host
(`cli/run_host.py`: the host runs the turn and keeps a goal going) and say how it ended
(`RunOutcome`). `/model` and `/idle` with `--workspace` are carried out by the host's command
layer (`xum.host.commands`, the `run` row), nothing sent to a model.

Everything that can fail on configuration (the model, a price a budget needs, the workspace to
continue and whether it is free) is checked before anything is written.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xum.cli.run_outcome import (
    EXIT_BUDGET,
    EXIT_ERROR,
    EXIT_GOAL_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    RunOutcome,
)
from xum.core import startup_gc
from xum.core.errors import UsageError, XumError
from xum.core.paths import config_path
from xum.workspaces.safety.choice import SafetyChoice

if TYPE_CHECKING:
    from xum.cli.render import Renderer
    from xum.context.slash import WorkspaceCommand
    from xum.engine.goals import Decision
    from xum.engine.records import TurnResult
    from xum.engine.route import ModelRoute
    from xum.host.workspace_host import WorkspaceHost
    from xum.llm.types import ThinkingLevel
    from xum.runtime.git import WorkTreeQuery
    from xum.store.registry import WorkspaceRecord
    from xum.workspaces.lifecycle import CreatedWorkspace


@dataclass
class RunRequest:
    """What `xum run` was asked to do: its flags and message, as parsed."""

    text: str
    directory: Path
    model: str | None
    runtime: str
    runtime_given: bool  # --runtime was on the command line
    mode: str
    mode_given: bool
    thinking: str | None
    budget: float | None
    renderer: Renderer
    project: WorkTreeQuery | None = None
    workspace: str | None = None  # --workspace: id, name or "last"
    goal: str | None = None
    goal_budget_cents: int | None = None
    goal_turns: int | None = None
    safety: SafetyChoice = field(default_factory=SafetyChoice)  # --sandbox, --permissions, ...
    external_agent: str | None = None  # --external-agent: an external ACP agent's name
    flags_given: tuple[str, ...] = ()  # of --model, --thinking, --budget: those on the line


async def execute(req: RunRequest) -> RunOutcome:
    from xum.engine.route import resolve_route
    from xum.llm.http import prewarm
    from xum.llm.thinking import DEFAULT_THINKING, parse_thinking
    from xum.store.config import read_config
    from xum.store.providers import load_providers

    _check_goal_flags(req)
    record = _existing_workspace(req) if req.workspace is not None else None
    # A one-shot `/<alias>+<level> message` picks the model and thinking of this run.
    text, model, thinking_text, command = _one_shot_override(req.text, req.model, req.thinking)
    if command is not None:
        if record is None:
            from xum.engine.userinput import chat_command_refusal

            raise chat_command_refusal(command)
        return await _workspace_command(record, command)
    if req.goal is not None:
        mode = "exec"  # a goal run works in exec mode (ADR 0004)
    elif record is None or req.mode_given:
        mode = req.mode
    else:
        mode = record.agent or "exec"
    if record is not None:
        model = model or record.model
        thinking_text = thinking_text or record.thinking
    # The agent's own defaults (frontmatter `ai:`) come after the flags and the environment.
    agent_model, agent_thinking = None, None
    if model is None or (thinking_text is None and not os.environ.get("XUM_THINKING_LEVEL")):
        from xum.context.workspace import agent_ai_defaults

        agent_model, agent_thinking = await agent_ai_defaults(str(req.directory), mode)
    # config.json is read once, for the route and the sub-agent settings (the shared snapshot
    # the later readers revalidate with a stat).
    providers, config = load_providers(), read_config()
    route = resolve_route(model or agent_model, providers=providers, config=config)
    prewarm(route.endpoint.base_url)  # overlaps the setup below
    thinking = parse_thinking(
        thinking_text or os.environ.get("XUM_THINKING_LEVEL") or agent_thinking or DEFAULT_THINKING,
        route.provider,
        route.model_id,
    )
    for amount, flag in ((req.budget, "--budget"), (req.goal_budget_cents, "--goal-budget")):
        if amount is not None and route.price is None:
            raise XumError(
                f"{route.model_string} has no known price, so a {flag} cannot be enforced",
                hint=f'pick a priced model, or add its price under "modelPrices" in '
                f'{config_path()} (e.g. {{"modelPrices": {{"{route.model_string}": '
                '{"input": 3, "output": 15}}}, USD per million tokens)',
            )
    if req.goal is not None and not text:
        text = req.goal  # the goal is also the kickoff message
    exit_choice: dict[str, Any] = {}

    def set_exit_code(code: int, reason: str) -> None:
        exit_choice.update(code=code, reason=reason)

    # A new workspace is made on a worker thread while this one imports the host and engine.
    creating = (
        asyncio.ensure_future(_create(req, text, route, thinking, mode)) if record is None else None
    )
    await asyncio.sleep(0)  # let it start its thread
    from xum.cli.run_host import RunAdapter
    from xum.host.workspace_host import OpenSettings
    from xum.workspaces import assembly  # the host imports it on open: import it meanwhile
    from xum.workspaces.subagents.host import TaskSettings

    del assembly

    created = await creating if creating is not None else None
    settings = OpenSettings(
        route=route,
        thinking=thinking,
        agent=mode,
        budget_usd=req.budget,
        set_exit_code=set_exit_code,
        task_settings=TaskSettings.from_config(config),
    )
    if created is not None:
        record = created.record
    assert record is not None
    # What the run needs is loaded: the collector, held off since the entry point, runs again.
    startup_gc.release()
    adapter = RunAdapter(req, record.id, created.init if created is not None else None)
    try:
        result, decision, host = await adapter.run(record, text, created, settings)
    finally:
        if created is not None and created.init is not None:
            created.init.cancel()  # a no-op unless the run failed or was interrupted
    return _outcome(host, route, result, decision, exit_choice, req)


def _check_goal_flags(req: RunRequest) -> None:
    if req.goal is None:
        for value, flag in (
            (req.goal_budget_cents, "--goal-budget"),
            (req.goal_turns, "--goal-turns"),
        ):
            if value is not None:
                raise UsageError(f"{flag} bounds a goal run: it needs --goal <objective>")
        return
    if not req.goal.strip():
        raise UsageError("--goal needs an objective", hint='xum run --goal "make the tests pass"')
    if req.mode_given and req.mode != "exec":
        raise UsageError(
            "a goal run works in exec mode", hint="leave out --mode plan, or drop --goal"
        )


def _existing_workspace(req: RunRequest) -> WorkspaceRecord:
    """The workspace `--workspace` names, refused when it cannot take a turn now."""
    from xum.cli.run_workspace import resolve_workspace

    if req.runtime_given:
        raise UsageError(
            "--runtime creates a new workspace; --workspace continues one with its own runtime",
            hint="drop one of the two",
        )
    assert req.workspace is not None
    return resolve_workspace(req.workspace, req.directory)


async def _workspace_command(record: WorkspaceRecord, command: WorkspaceCommand) -> RunOutcome:
    """`/idle` and `/model` in a `--workspace` run: carried out by the host's command layer,
    nothing sent to a model."""
    from xum.host import commands
    from xum.host.hosts import Hosts
    from xum.host.listener import NullListener
    from xum.host.workspace_host import HostOptions

    hosts = Hosts(NullListener(), options=HostOptions(frontend="run", purpose="run", people=False))
    done = await commands.apply(hosts, record, command)
    extra: dict[str, Any] = {
        "workspace_id": record.id,
        "workspace_name": record.name,
        "workspace_path": record.path,
        "text": "",
        "steps": 0,
        "command": done.command,
    }
    if done.command == "idle":
        extra["idle_hours"] = done.idle_hours
    else:
        extra["model"] = done.record.model
    return RunOutcome(EXIT_OK, "completed", extra)


async def _create(
    req: RunRequest, text: str, route: ModelRoute, level: ThinkingLevel, mode: str
) -> CreatedWorkspace:
    """A new workspace for the run, named after its message (git, the registry write and its
    fsyncs on a worker thread)."""
    from xum.workspaces.lifecycle import create_workspace

    return await create_workspace(
        req.directory,
        req.runtime,
        name_hint=" ".join(text.split()[:4]),
        title=" ".join(text.split())[:80],
        on_init_line=_init_line_sink(req.renderer),
        model=route.model_string,
        thinking=level,
        agent=mode,
        project_query=req.project,
    )


def _outcome(
    host: WorkspaceHost,
    route: ModelRoute,
    result: TurnResult,
    decision: Decision | None,
    exit_choice: dict[str, Any],
    req: RunRequest,
) -> RunOutcome:
    record = host.session.record
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
        extra["limit"] = {"kind": "session_budget", "budget_usd": req.budget}
    if result.error:
        extra["error"] = result.error
    if exit_choice:
        extra["agent_exit_code"] = exit_choice
    reason: str = result.reason
    code = {
        "completed": EXIT_OK,
        "interrupted": EXIT_INTERRUPTED,
        "budget": EXIT_BUDGET,
    }.get(reason, EXIT_ERROR)
    if decision is not None and decision.goal is not None:
        goal = decision.goal
        goals = host.session.agent.goals
        extra["goal"] = {
            **{k: v for k, v in goal.to_json().items() if k != "baseUsd"},
            "turns": goal.turns,
            "spentCents": goals.spent_cents(goal),
        }
        if decision.kind == "complete":
            reason, code = "completed", EXIT_OK
        elif decision.reason == "goal_budget":
            reason, code = "goal_budget", EXIT_GOAL_INCOMPLETE
            extra["limit"] = {"kind": "goal_budget", "budget_cents": goal.budget_cents}
        elif decision.reason == "goal_turns":
            reason, code = "goal_turns", EXIT_GOAL_INCOMPLETE
            extra["limit"] = {"kind": "goal_turns", "turn_cap": goal.turn_cap}
    if code == EXIT_OK and exit_choice:
        code = int(exit_choice["code"])
    return RunOutcome(code, reason, extra)


def _one_shot_override(
    text: str, model: str | None, thinking: str | None
) -> tuple[str, str | None, str | None, WorkspaceCommand | None]:
    """`/sonnet+high fix it` -> ("fix it", "sonnet", "high", None); the flags are the fallback.
    A workspace command (`/model`, `/fork`, `/idle`) comes back as the last item; session
    commands (`/compact`, `/clear`, `/goal`) stay in the text for the session to carry out."""
    if not text.startswith("/"):
        return text, model, thinking, None
    from xum.context.slash import SlashError, parse_override
    from xum.host import commands
    from xum.llm.catalog import aliases

    # The host's command layer, with `xum run`'s row of the table: `/fork` is refused there.
    command = commands.parse(text, "run")
    if commands.is_workspace_command(command):
        return text, model, thinking, command
    if command is not None:
        return text, model, thinking, None
    try:
        override = parse_override(text, set(aliases()))
    except SlashError as exc:
        raise UsageError(str(exc)) from None
    if override is None:
        return text, model, thinking, None
    return override.text, override.model or model, override.thinking or thinking, None


def _init_line_sink(renderer: Renderer) -> Callable[[str], None] | None:
    """How `.xum/init` output is shown: an `init-output` event per line with --json, dimmed
    lines on stderr in text mode, nothing with --quiet."""
    from xum.cli.render import JsonRenderer, TextRenderer
    from xum.engine import events as E

    if isinstance(renderer, JsonRenderer | TextRenderer):
        return lambda line: renderer(E.InitOutput(line=line))
    return None
