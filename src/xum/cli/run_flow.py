"""What `xum run` does once its flags are read: open a workspace's session (a new workspace, or
`--workspace` an existing one), run the message as a turn, keep a goal going, and say how it
ended (`RunOutcome`).

Everything that can fail on configuration (the model, a price a budget needs, the workspace to
continue and whether it is free) is checked before anything is written.
"""

from __future__ import annotations

import asyncio
import os
import signal
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
from xum.core.errors import UsageError, XumError
from xum.core.paths import config_path
from xum.workspaces.safety.choice import SafetyChoice

if TYPE_CHECKING:
    from xum.cli.render import Renderer
    from xum.context.slash import WorkspaceCommand
    from xum.engine.goals import Decision
    from xum.engine.route import ModelRoute
    from xum.engine.turn import TurnResult
    from xum.llm.types import ThinkingLevel
    from xum.runtime.git import WorkTreeQuery
    from xum.store.registry import WorkspaceRecord
    from xum.workspaces.assembly import WorkspaceSession
    from xum.workspaces.init_hook import InitHookRun
    from xum.workspaces.lifecycle import CreatedWorkspace


@dataclass
class RunRequest:
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


async def execute(req: RunRequest) -> RunOutcome:
    from xum.engine.route import resolve_route
    from xum.llm.http import prewarm
    from xum.llm.thinking import DEFAULT_THINKING, parse_thinking
    from xum.store.config import load_config
    from xum.store.providers import load_providers

    _check_goal_flags(req)
    record = _existing_workspace(req) if req.workspace is not None else None
    # A one-shot `/<alias>+<level> message` picks the model and thinking of this run.
    text, model, thinking_text, command = _one_shot_override(req.text, req.model, req.thinking)
    if command is not None:
        if record is None:
            from xum.engine.userinput import chat_command_refusal

            raise chat_command_refusal(command)
        return _workspace_command(record, command)
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
    # config.json is read once, for the route and the sub-agent settings.
    providers, config = load_providers(), load_config()
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

    opened, created = await _open(req, record, text, route, thinking, mode, set_exit_code, config)
    init = created.init if created is not None else None
    try:
        result, decision = await _turns(opened, req, text, init)
    finally:
        if init is not None:
            init.cancel()  # a no-op unless the run failed or was interrupted
        # Children and background processes end with the run: nothing outlives it.
        await opened.aclose()
    return _outcome(opened, route, result, decision, exit_choice, req)


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


def _workspace_command(record: WorkspaceRecord, command: WorkspaceCommand) -> RunOutcome:
    """`/idle` and `/model` in a `--workspace` run: carried out, nothing sent to a model."""
    from xum.context.slash import IdleCommand, ModelCommand
    from xum.store import registry

    extra: dict[str, Any] = {
        "workspace_id": record.id,
        "workspace_name": record.name,
        "workspace_path": record.path,
        "text": "",
        "steps": 0,
    }
    if isinstance(command, IdleCommand):
        from xum.store.compaction_config import set_idle_hours

        set_idle_hours(record.project_path, command.hours)
        return RunOutcome(
            EXIT_OK, "completed", {**extra, "command": "idle", "idle_hours": command.hours}
        )
    if isinstance(command, ModelCommand) and command.model is not None:
        from xum.llm import catalog

        provider, model_id = catalog.resolve_model_string(command.model)
        changed = registry.update_workspace(record.id, model=f"{provider}:{model_id}")
        return RunOutcome(
            EXIT_OK, "completed", {**extra, "command": "model", "model": changed.model}
        )
    if isinstance(command, ModelCommand):
        raise UsageError("/model needs a model: an alias or provider:model (e.g. /model sonnet)")
    raise UsageError(
        "/fork makes a new workspace, which a run continuing this one cannot do",
        hint="fork from the browser UI (xum server) or with POST /api/workspaces/{id}/fork",
    )


async def _open(
    req: RunRequest,
    record: WorkspaceRecord | None,
    text: str,
    route: ModelRoute,
    level: ThinkingLevel,
    mode: str,
    set_exit_code: Callable[[int, str], None],
    config: dict[str, Any],
) -> tuple[WorkspaceSession, CreatedWorkspace | None]:
    from xum.workspaces.lifecycle import create_workspace

    created: CreatedWorkspace | None = None
    if record is None:
        # The workspace is made on a worker thread (git, the registry write and its fsyncs)
        # while this one imports the engine.
        creating = asyncio.ensure_future(
            create_workspace(
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
        )
        await asyncio.sleep(0)  # let it start its thread
    from xum.context.workspace import AgentSelection
    from xum.workspaces.assembly import open_workspace_session
    from xum.workspaces.subagents.host import TaskSettings

    if record is None:
        created = await creating
        record = created.record
    # Secrets, hooks (trusted projects only), masking, a sub-agent host made on first use (its
    # children's events are not rendered: their logs keep them); notices go to the renderer.
    # The run owns the workspace until it exits, so the session keeps the writer lock (which
    # also refuses a workspace another process took meanwhile).
    try:
        opened = await open_workspace_session(
            record,
            route=route,
            thinking=level,
            emit=req.renderer,
            created=created,
            selection=AgentSelection(agent_id=mode),
            budget_usd=req.budget,
            set_exit_code=set_exit_code,
            task_settings=TaskSettings.from_config(config),
            purpose="run",
            hold_writer=True,
            goals=True,
            safety=req.safety,
        )
    except BaseException:
        if created is not None:
            if created.init is not None:
                created.init.cancel()
            await created.runtime.close()
        raise
    return opened, created


async def _turns(
    opened: WorkspaceSession, req: RunRequest, text: str, init: InitHookRun | None
) -> tuple[TurnResult, Decision | None]:
    """The message as a turn, then the goal's continuations, with Ctrl-C wired to interrupt."""
    from xum.engine import events as E
    from xum.engine.goals import drive

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
        goals = session.goals
        before = goals.current
        if req.goal is not None:
            if req.goal_budget_cents is None and req.goal_turns is None:
                req.renderer(
                    E.Advisory(
                        kind="goal-uncapped",
                        message="the goal has no --goal-budget and no --goal-turns: it runs "
                        "until it is complete, --budget is exceeded or you stop it",
                    )
                )
            await goals.set(
                req.goal,
                budget_cents=req.goal_budget_cents,
                turn_cap=req.goal_turns,
                source="cli",
            )
        result = await session.run_turn(text)
        if init is not None and result.reason != "interrupted":
            await _finish_init(init, req.renderer)
        goal = goals.current
        adopted = (
            req.goal is None
            and goal is not None
            and goal.live
            and (before is None or goal.id != before.id)
        )
        if adopted:
            assert goal is not None
            req.renderer(
                E.GoalAdopted(
                    goalId=goal.id,
                    objective=goal.objective,
                    status=goal.status,
                    budgetCents=goal.budget_cents,
                    turnCap=goal.turn_cap,
                )
            )
        if req.goal is None and not adopted:
            return result, None
        return await drive(session, result)
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def _outcome(
    opened: WorkspaceSession,
    route: ModelRoute,
    result: TurnResult,
    decision: Decision | None,
    exit_choice: dict[str, Any],
    req: RunRequest,
) -> RunOutcome:
    record = opened.record
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
        goals = opened.agent.goals
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
    from xum.context.slash import (
        ForkCommand,
        IdleCommand,
        ModelCommand,
        SlashError,
        parse_command,
        parse_override,
    )
    from xum.llm.catalog import aliases

    try:
        command = parse_command(text)
        if isinstance(command, ModelCommand | ForkCommand | IdleCommand):
            return text, model, thinking, command
        if command is not None:
            return text, model, thinking, None
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


async def _finish_init(init: InitHookRun, renderer: Renderer) -> None:
    """A one-shot run ends with its workspace set up: wait for the init hook if it still runs."""
    from xum.engine import events as E

    if not init.done:
        renderer(
            E.Advisory(kind="init-hook-wait", message=f"waiting for {init.hook.display} to finish")
        )
    status = await init.wait()
    renderer(E.InitEnd(status=status, exit_code=init.exit_code))
