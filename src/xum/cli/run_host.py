"""`xum run` as an adapter over the workspace host (`xum.host`): it opens the run's workspace
through `Hosts`, sends the message, shows the host's events through the run's renderer, turns
Ctrl-C into the host's interrupt and hands the results back for the exit code.

The host drives: the turn, then the goal's continuations (`engine.goals`), the writer lock taken
per turn. What is particular to a one-shot run comes in through the host's turn hook: after the
first turn the run waits for the workspace's init hook and announces a goal the agent adopted;
a run with no goal of its own continues none (a goal left live in a `--workspace` stays for
whoever continues the workspace next, as before the host). Nobody answers questions or
approvals in a run (`--approval never|deny`), so the host is opened without people.
"""

from __future__ import annotations

import asyncio
import os
import signal
from typing import TYPE_CHECKING

from xum.cli.run_outcome import EXIT_INTERRUPTED
from xum.engine import events as E
from xum.host.hosts import Hosts
from xum.host.listener import NullListener
from xum.host.workspace_host import HostOptions, OpenSettings, WorkspaceHost

if TYPE_CHECKING:
    from xum.cli.render import Renderer
    from xum.cli.run_flow import RunRequest
    from xum.engine.goals import Decision
    from xum.engine.records import TurnResult
    from xum.store.registry import WorkspaceRecord
    from xum.workspaces.init_hook import InitHookRun
    from xum.workspaces.lifecycle import CreatedWorkspace


class RunListener(NullListener):
    """The run's workspace's events go to the renderer (a sub-agent's stay in its own log);
    a turn's failure is kept for the run to raise once the drive ends."""

    def __init__(self, workspace_id: str, renderer: Renderer) -> None:
        self.workspace_id = workspace_id
        self.renderer = renderer
        self.failure: Exception | None = None

    def event(self, workspace_id: str, event: E.Event) -> None:
        if workspace_id == self.workspace_id:
            self.renderer(event)

    def turn_failed(self, workspace_id: str, error: Exception) -> None:
        if workspace_id == self.workspace_id and self.failure is None:
            self.failure = error


class RunAdapter:
    def __init__(self, req: RunRequest, workspace_id: str, init: InitHookRun | None) -> None:
        self.req = req
        self.init = init
        self.listener = RunListener(workspace_id, req.renderer)
        options = HostOptions(
            frontend="run",
            purpose="run",
            safety=req.safety,
            people=False,
            goals=True,
            wakes=False,  # one request (and its goal), then exit: nobody to wake
        )
        self.hosts = Hosts(self.listener, options=options)
        self.total: TurnResult | None = None  # the turns so far, their usage summed
        self.goal_run = req.goal is not None
        self.goal_before: str | None = None

    async def run(
        self,
        record: WorkspaceRecord,
        text: str,
        created: CreatedWorkspace | None,
        settings: OpenSettings,
    ) -> tuple[TurnResult, Decision | None, WorkspaceHost]:
        """The message as a turn, then the goal's continuations, with Ctrl-C wired to the
        host's interrupt. Children and background processes end with the run."""
        try:
            host = await self.hosts.open(record, created=created, settings=settings)
        except BaseException:
            # A runtime the host took for the session but could not open it with is the run's
            # to close; one still waiting in the host goes with its shutdown.
            if created is not None and record.id not in self.hosts.prepared:
                await created.runtime.close()
            await self.hosts.shutdown()
            raise
        host.turn_ended = self._turn_ended
        loop = asyncio.get_running_loop()
        interrupts = 0

        def on_sigint() -> None:
            nonlocal interrupts
            interrupts += 1
            if interrupts >= 2:
                # Leave now: the log is durable as it stands (the next open closes the turn),
                # and the commands this run started go with it.
                from xum.runtime.process import kill_child_groups

                kill_child_groups()
                os._exit(EXIT_INTERRUPTED)
            host.interrupt()

        loop.add_signal_handler(signal.SIGINT, on_sigint)
        try:
            await self._set_goal(host)
            await self.hosts.send(record, text)
            await host.wait_done()
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            await self.hosts.shutdown()
        if self.listener.failure is not None:
            raise self.listener.failure
        assert self.total is not None
        return self.total, host.decision if self.goal_run else None, host

    async def _set_goal(self, host: WorkspaceHost) -> None:
        req = self.req
        goals = host.session.agent.goals
        before = goals.current
        self.goal_before = before.id if before is not None else None
        if req.goal is None:
            return
        if req.goal_budget_cents is None and req.goal_turns is None:
            req.renderer(
                E.Advisory(
                    kind="goal-uncapped",
                    message="the goal has no --goal-budget and no --goal-turns: it runs "
                    "until it is complete, --budget is exceeded or you stop it",
                )
            )
        await goals.set(
            req.goal, budget_cents=req.goal_budget_cents, turn_cap=req.goal_turns, source="cli"
        )

    async def _turn_ended(self, result: TurnResult) -> bool:
        """The host's turn hook: sum the turns; after the first, finish the init hook and
        notice a goal the agent adopted. True: the goal (if any) may continue."""
        first = self.total is None
        self.total = result if self.total is None else result.after(self.total)
        if not first:
            return self.goal_run
        if self.init is not None and result.reason != "interrupted":
            await _finish_init(self.init, self.req.renderer)
        host = self.hosts.get(self.listener.workspace_id)
        assert host is not None
        goal = host.session.agent.goals.current
        adopted = (
            self.req.goal is None and goal is not None and goal.live and goal.id != self.goal_before
        )
        if adopted:
            assert goal is not None
            self.req.renderer(
                E.GoalAdopted(
                    goalId=goal.id,
                    objective=goal.objective,
                    status=goal.status,
                    budgetCents=goal.budget_cents,
                    turnCap=goal.turn_cap,
                )
            )
            self.goal_run = True
        return self.goal_run


async def _finish_init(init: InitHookRun, renderer: Renderer) -> None:
    """A one-shot run ends with its workspace set up: wait for the init hook if it still runs."""
    if not init.done:
        renderer(
            E.Advisory(kind="init-hook-wait", message=f"waiting for {init.hook.display} to finish")
        )
    status = await init.wait()
    renderer(E.InitEnd(status=status, exit_code=init.exit_code))
