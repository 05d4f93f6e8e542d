"""What the terminal UI does on the user's behalf: send messages and the chat commands, and
create, fork, rename, archive and delete workspaces, review them, change their model, thinking
level and agent.

Everything goes through the layers every front-end shares: the workspace host (`xum.host`) for
sessions and a workspace's model, thinking level and agent, the workspace lifecycle for the
checkouts, the one command layer (`xum.host.commands`, the terminal UI's row) for chat
commands (`/model` and `/fork` also select and show what they made here, `/idle` is carried out
by the command layer; every other command, skills and one-shot overrides included, runs in the
session), `xum.workspaces.review` for the diff. Failures are shown, with what to do, in the transcript or as a notification;
nothing here raises into the app.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from xum.core.errors import XumError
from xum.engine.display import strip_controls
from xum.tui import scratch
from xum.tui.attachments import PendingImages, image_command
from xum.tui.composer import Suggestion
from xum.tui.runner import Workspace
from xum.workspaces.safety.choice import PERMISSION_MODES, PermissionMode, stored_permissions

if TYPE_CHECKING:
    from xum.context.slash import IdleCommand
    from xum.store.registry import WorkspaceRecord
    from xum.tui.app import XumApp
    from xum.tui.approval import ApprovalPanel
    from xum.tui.dialogs import NewWorkspace
    from xum.tui.question import QuestionPanel
    from xum.workspaces.safety.approvals import ApprovalAnswer

DEFAULT_AGENT = "exec"
DEFAULT_THINKING = "medium"


class Actions:
    def __init__(self, app: XumApp) -> None:
        self.app = app
        self.default_model: str | None = None  # what a workspace without a model runs
        self.default_problem: str | None = None  # why there is none (no provider)
        self.draft_model: str | None = None
        self.draft_thinking: str | None = None
        self.draft_agent = DEFAULT_AGENT
        self.draft_permissions: PermissionMode = "auto"
        self.draft_scratch = False  # the draft row makes a scratch chat (xum.tui.scratch)
        # One message at a time: a second Enter while the first one still creates its
        # workspace must go to that workspace (queued), not make another.
        self._sending = asyncio.Lock()
        self.images = PendingImages()  # `/image <path>`: what the next message carries

    # Settings ----------------------------------------------------------------------------

    def resolve_default_model(self) -> None:
        """What a workspace without a model runs. Called before the first frame (two small
        files read), so the bar names the model from the start, not after a redraw."""
        from xum.engine.route import resolve_route

        try:
            route = resolve_route(None)
        except XumError as exc:
            self.default_model, self.default_problem = None, exc.message
            self.app.draft_note(f"{exc.message}; {exc.hint}" if exc.hint else exc.message, "warn")
        else:
            self.default_model, self.default_problem = route.model_string, None

    def settings_of(self, ws: Workspace | None) -> tuple[str, str, str]:
        """(agent, model, thinking level) as the composer bar shows them."""
        if ws is None:
            agent, model, thinking = self.draft_agent, self.draft_model, self.draft_thinking
        else:
            record = ws.record
            agent, model, thinking = record.agent or DEFAULT_AGENT, record.model, record.thinking
        shown = model or self.default_model or "no model (no provider configured)"
        return agent, shown, thinking or DEFAULT_THINKING

    async def set_model(self, ws: Workspace | None, text: str) -> bool:
        """Validate and store a model for `ws` (or the new workspace); False when refused."""
        from xum.llm import catalog

        try:
            provider, model_id = catalog.resolve_model_string(text)
        except XumError as exc:
            self.app.notify(
                f"{exc.message}" + (f" ({exc.hint})" if exc.hint else ""),
                severity="error",
                markup=False,
            )
            return False
        model = f"{provider}:{model_id}"
        if ws is None:
            self.draft_model = model
        else:
            await self._update(ws, model=model)
        self.app.redraw_bar()
        return True

    async def _update(self, ws: Workspace, **changes: str) -> None:
        """A new model, thinking level or agent: the open session takes it from its next turn
        on (through the host, without reopening)."""
        await self.app.runner.configure(ws, **changes)
        self.app.sidebar.redraw(ws)

    async def next_thinking(self) -> None:
        from xum.llm.thinking import allowed_levels

        ws = self.app.selected
        _agent, model, current = self.settings_of(ws)
        provider, _, model_id = model.partition(":")
        levels = list(allowed_levels(provider or None, model_id or None))
        index = levels.index(current) if current in levels else -1
        level = levels[(index + 1) % len(levels)]
        if ws is None:
            self.draft_thinking = level
        else:
            await self._update(ws, thinking=level)
        self.app.redraw_bar()

    def permissions_of(self, ws: Workspace | None) -> PermissionMode:
        """The permission mode the workspace's tool calls run in (docs/security.md)."""
        if ws is None:
            return self.draft_permissions
        return stored_permissions(ws.record.permissions)

    async def next_permissions(self) -> None:
        """auto, ask, read-only, auto...: read on every tool call, so the next call of a running
        turn already runs in the new mode (the session is not reopened)."""
        from xum.store import registry

        ws = self.app.selected
        current = self.permissions_of(ws)
        new = PERMISSION_MODES[(PERMISSION_MODES.index(current) + 1) % len(PERMISSION_MODES)]
        if ws is None:
            self.draft_permissions = new
        else:
            workspace_id = ws.id
            ws.record = await asyncio.to_thread(
                lambda: registry.update_workspace(workspace_id, permissions=new)
            )
        self.app.redraw_bar()

    async def agent_choices(self, ws: Workspace | None) -> list[tuple[str, str]]:
        """(id, label) of the agents a user may pick here: the project's, the global ones and
        the built-ins (enabled, resolvable, not `ui.hidden`), as the browser's picker offers."""
        from xum.workspaces.listing import workspace_context

        record = ws.record if ws is not None else self._project_record()
        try:
            async with workspace_context(record) as context:
                agents = await context.list_agents()
        except Exception as exc:  # a broken agent file must not break the UI
            self.app.notify(f"cannot list the agents: {exc}", severity="warning", markup=False)
            return []
        out = []
        for agent in agents:
            label = strip_controls(agent.name or agent.id)
            if agent.description:
                label += " — " + strip_controls(agent.description)
            out.append((agent.id, label))
        return out

    async def set_agent(self, ws: Workspace | None, agent_id: str) -> None:
        if ws is None:
            self.draft_agent = agent_id
        else:
            await self._update(ws, agent=agent_id)
        self.app.redraw_bar()

    async def toggle_mode(self) -> None:
        ws = self.app.selected
        agent = self.settings_of(ws)[0]
        new = "exec" if agent == "plan" else "plan"
        if ws is None:
            self.draft_agent = new
        else:
            await self._update(ws, agent=new)
        self.app.redraw_bar()

    def model_choices(self) -> list[tuple[str, str]]:
        from xum.llm.catalog import aliases

        return [(model, f"{alias:<12} {model}") for alias, model in aliases().items()]

    # Sending -----------------------------------------------------------------------------

    async def send(self, text: str, when: str) -> None:
        """A message from the composer: a chat command, or a message for the agent (which
        creates the workspace first when the new-workspace row is selected)."""
        async with self._sending:
            await self._send(text, when)

    async def _send(self, text: str, when: str) -> None:
        from xum.context.slash import ForkCommand, IdleCommand, ModelCommand
        from xum.host import commands

        app = self.app
        if (image := image_command(text)) is not None:  # held for the next message
            try:
                app.notify(self.images.command(image, Path.cwd()), markup=False)
            except XumError as exc:
                self._problem(exc.message, exc.hint)
            app.redraw_bar()
            return
        try:
            command = commands.parse(text, "tui")
        except XumError as exc:
            self._problem(exc.message, exc.hint)
            return
        if isinstance(command, IdleCommand):
            await self._idle_command(command)
            return
        if isinstance(command, ModelCommand):
            if command.model is None:
                app.action_pick_model()
            elif await self.set_model(app.selected, command.model):
                app.notify(f"model: {self.settings_of(app.selected)[1]}", markup=False)
            return
        if isinstance(command, ForkCommand):
            if app.selected is None:
                self._problem("/fork needs a workspace: send a first message, then fork it")
                return
            if await self.fork(command.name) and command.message:
                await self._message(command.message, "step")  # to the fork, now selected
            return
        await self._message(text, when)

    async def _idle_command(self, command: IdleCommand) -> None:
        """`/idle`: the project's idle compaction setting (xum.host.commands carries it out)."""
        from xum.host import commands

        app = self.app
        ws = app.selected
        record = ws.record if ws is not None else self._project_record()
        try:
            result = await commands.apply(app.runner.hosts, record, command)
        except XumError as exc:
            self._problem(exc.message, exc.hint)
            return
        hours = result.idle_hours
        said = "off" if hours is None else f"after {hours:g} idle hour(s)"
        app.notify(f"idle compaction: {said}", markup=False)

    async def _message(self, text: str, when: str) -> None:
        app = self.app
        ws = app.selected
        try:
            if ws is None:
                ws = await self._create_for(text)
                if ws is None:
                    return
            await app.runner.send(
                ws, text, "step" if when != "turn" else "turn", self.images.images
            )
            self.images.clear()  # sent with this message (kept when it was refused)
        except XumError as exc:
            self._problem(exc.message, exc.hint, retry=text)
        app.redraw_bar()

    async def _create_for(self, text: str) -> Workspace | None:
        """The workspace the first message of the new-workspace row makes: local, in the
        project directory, with the composer's model, thinking level and agent."""
        words = " ".join(text.split())
        if self.draft_scratch:
            return await scratch.create_chat(self.app, words[:80])
        return await self.create_workspace(
            "local",
            name=None,
            title=words[:80],
            name_hint=" ".join(text.split()[:4]),
            model=self.draft_model,
            thinking=self.draft_thinking,
            agent=self.draft_agent,
            permissions=self.draft_permissions,
        )

    def _problem(self, message: str, hint: str | None = None, retry: str | None = None) -> None:
        app = self.app
        transcript = app.selected.transcript if app.selected else app.draft
        changes = transcript.error("error", message, hint, retry)
        app.transcript_view.apply(changes)

    async def retry(self) -> None:
        """Send the message of the last error card again."""
        from xum.tui.transcript import ErrorEntry

        app = self.app
        transcript = app.selected.transcript if app.selected else app.draft
        for entry in reversed(transcript.entries):
            if isinstance(entry, ErrorEntry) and entry.retry:
                await self.send(entry.retry, "step")
                return
        app.notify("nothing to send again", markup=False)

    async def implement_plan(self) -> None:
        """The proposed plan is accepted: the workspace switches to Exec and is asked to carry
        it out."""
        from xum.tui.transcript import PlanEntry

        ws = self.app.selected
        plan = None
        if ws is not None:
            plan = next(
                (e for e in reversed(ws.transcript.entries) if isinstance(e, PlanEntry)), None
            )
        if ws is None or plan is None:
            self.app.notify("no plan was proposed in this workspace", markup=False)
            return
        if ws.running:
            self.app.notify(
                "the turn still runs; wait for it (or Esc) first", severity="warning", markup=False
            )
            return
        await self._update(ws, agent="exec")
        where = f" in {plan.path}" if plan.path else ""
        await self.send(f"The plan{where} is approved. Carry it out now, step by step.", "step")

    async def start_here(self) -> None:
        """The latest plan or final reply becomes the whole context of the model."""
        app = self.app
        ws = app.selected
        seq = ws.transcript.start_here_seq() if ws is not None else None
        if ws is None or seq is None:
            app.notify(
                "nothing to start from: Start Here needs a plan or a final reply", markup=False
            )
            return
        try:
            await app.runner.start_here(ws, seq)
        except XumError as exc:
            app.notify(f"{exc.message} ({exc.hint})" if exc.hint else exc.message, markup=False)

    # Questions ---------------------------------------------------------------------------

    def interrupt(self, ws: Workspace) -> None:
        """Esc: stop the turn this process runs and put back what was queued."""
        unsent = self.app.runner.interrupt(ws)
        if unsent is None:
            if ws.busy_elsewhere:
                self.app.notify("another process runs this turn: stop it there", markup=False)
            return
        self.app.put_back(unsent)

    def show_question(self) -> None:
        from xum.tui.question import QuestionPanel

        app = self.app
        slot = app.query_one("#question-slot")
        if not slot.is_attached:  # the app is exiting (a turn stopped as it quits)
            return
        ws = app.selected
        pending = ws.question if ws is not None else None
        shown = slot.query(QuestionPanel)
        current = shown.first() if shown else None
        if current is not None and (
            pending is None or current.questions != list(pending.questions)
        ):
            current.remove()
            current = None
            app.composer.focus()
        if pending is not None and current is None:
            slot.mount(QuestionPanel(pending.questions))
        self._show_approval()

    def _show_approval(self) -> None:
        from xum.tui.approval import ApprovalPanel

        app = self.app
        slot = app.query_one("#question-slot")
        ws = app.selected
        pending = ws.approval if ws is not None else None
        shown = slot.query(ApprovalPanel)
        current = shown.first() if shown else None
        if current is not None and (pending is None or current.request is not pending.request):
            current.remove()
            current = None
            app.composer.focus()
        if pending is not None and current is None:
            slot.mount(ApprovalPanel(pending.request))

    def decided(self, panel: ApprovalPanel, answer: ApprovalAnswer) -> None:
        ws = self.app.selected
        if ws is not None and ws.approval is not None and ws.approval.request is panel.request:
            self.app.runner.decide(ws, answer)
        panel.remove()
        self.app.composer.focus()

    def answered(self, panel: QuestionPanel, answers: dict[str, str]) -> None:
        ws = self.app.selected
        if ws is not None:
            self.app.runner.answer(ws, answers)
        panel.remove()
        self.app.composer.focus()

    # Slash menu --------------------------------------------------------------------------

    async def slash_suggestions(self, ws: Workspace | None) -> list[Suggestion]:
        from xum.workspaces.listing import slash_suggestions

        record = ws.record if ws is not None else self._project_record()
        try:
            found = await slash_suggestions(record)
        except Exception as exc:  # a broken skill directory must not break the composer
            self.app.notify(
                f"cannot list the slash commands: {exc}", severity="warning", markup=False
            )
            return []
        return [
            Suggestion(
                s.name if s.name.endswith("+") else s.name + " ",
                f"{s.name} {s.argument_hint}".strip(),
                s.description,
            )
            for s in found
        ]

    def _project_record(self) -> WorkspaceRecord:
        from xum.store.registry import WorkspaceRecord

        root = str(self.app.project_root)
        return WorkspaceRecord("new", "new", root, "local", root)

    # Workspaces --------------------------------------------------------------------------

    async def create_workspace(
        self,
        runtime: str,
        *,
        name: str | None,
        title: str,
        name_hint: str | None = None,
        model: str | None = None,
        thinking: str | None = None,
        agent: str = DEFAULT_AGENT,
        permissions: PermissionMode = "auto",
        share_credentials: bool = False,
        external_agent: str | None = None,  # an external ACP agent's name (config.json)
    ) -> Workspace | None:
        app = self.app
        fields: dict[str, object] = {"agent": agent, "share_credentials": share_credentials}
        fields["external_agent"] = external_agent
        if permissions != "auto":
            fields["permissions"] = permissions
        if model is not None:
            fields["model"] = model
        if thinking is not None:
            fields["thinking"] = thinking
        try:
            ws = await app.runner.create(
                app.project_dir,
                runtime,
                name_hint=name_hint or title or "workspace",
                title=title,
                name=name,
                **fields,
            )
        except XumError as exc:
            self._problem(f"cannot create the workspace: {exc.message}", exc.hint)
            return None
        await app.reload_workspaces(select=ws.id)  # and selects it
        return ws

    async def new_workspace(self, choice: NewWorkspace | None) -> None:
        if choice is None:
            return
        ws = await self.create_workspace(**vars(choice))  # runtime, name, title, share_credentials
        if ws is not None:
            self.app.composer.focus()

    async def fork(self, name: str | None) -> bool:
        """Fork the selected workspace and select the fork; False when it could not be made."""
        app = self.app
        source = app.selected
        if source is None:
            app.notify("select a workspace to fork", severity="warning", markup=False)
            return False
        try:
            ws = await app.runner.fork(source, name)
        except XumError as exc:
            self._problem(f"cannot fork: {exc.message}", exc.hint)
            return False
        await app.reload_workspaces(select=ws.id)  # and selects it
        app.notify(f"forked {source.record.name} as {ws.record.name}", markup=False)
        return True

    async def rename(self, ws: Workspace, name: str | None) -> None:
        from xum.workspaces.lifecycle import rename_workspace

        if name is None:
            return
        if not self._idle(ws, "rename"):
            return
        await self.app.runner.release(ws)
        try:
            record = await rename_workspace(ws.id, name)
        except XumError as exc:
            self.app.notify(_said(exc), severity="error", markup=False)
            return
        ws.record = record
        await self.app.reload_workspaces(select=ws.id)

    async def archive(self, ws: Workspace) -> None:
        from xum.workspaces.lifecycle import archive_workspace

        if not self._idle(ws, "archive"):
            return
        await self.app.runner.close(ws)
        try:
            await archive_workspace(ws.id)
        except XumError as exc:
            self.app.notify(_said(exc), severity="error", markup=False)
            return
        self.app.notify(f"archived {ws.record.name}", markup=False)
        await self._gone(ws)

    async def archived_choices(self) -> list[tuple[str, str]]:
        """(id, label) of the project's archived workspaces, newest first."""
        try:
            records = await self.app.runner.list_records(self.app.project_root, archived=True)
        except XumError as exc:
            self.app.notify(_said(exc), severity="error", markup=False)
            return []
        return [
            (r.id, strip_controls(f"{r.name} — {r.title}" if r.title else r.name)) for r in records
        ]

    async def unarchive(self, workspace_id: str) -> None:
        from xum.workspaces.lifecycle import unarchive_workspace

        try:
            record = await unarchive_workspace(workspace_id)
        except XumError as exc:
            self.app.notify(_said(exc), severity="error", markup=False)
            return
        self.app.notify(f"unarchived {record.name}", markup=False)
        await self.app.reload_workspaces(select=record.id)

    async def deletion_preview(self, ws: Workspace) -> None:
        from xum.tui.dialogs import DeleteDialog
        from xum.workspaces.lifecycle import deletion_preview

        if not self._idle(ws, "delete"):
            return
        try:
            removal = await asyncio.to_thread(deletion_preview, ws.record)
        except XumError as exc:
            self.app.notify(_said(exc), severity="error", markup=False)
            return

        def chosen(choice: str | None) -> None:
            if choice is not None:
                self.app.run_worker(self.delete(ws, force=choice == "force"), group="lifecycle")

        self.app.push_screen(DeleteDialog(ws.record.name, removal), chosen)

    async def delete(self, ws: Workspace, *, force: bool) -> None:
        from xum.workspaces.lifecycle import delete_workspace

        await self.app.runner.close(ws)
        try:
            report = await delete_workspace(ws.id, force=force)
        except XumError as exc:
            self.app.notify(_said(exc), severity="error", markup=False)
            return
        notes = "; ".join(report.notes)
        self.app.notify(
            f"deleted {ws.record.name}" + (f" ({notes})" if notes else ""), markup=False
        )
        await self._gone(ws)

    async def _gone(self, ws: Workspace) -> None:
        self.app.runner.forget(ws)
        self.app.completion.forget(ws.id)
        if self.app.selected is ws:
            await self.app.select(None)
        await self.app.reload_workspaces()

    def _idle(self, ws: Workspace, action: Literal["rename", "archive", "delete"]) -> bool:
        if ws.running:
            self.app.notify(
                f"a turn is running in {ws.record.name}; interrupt it (Esc) to {action} it",
                severity="warning",
                markup=False,
            )
            return False
        return True

    async def review(self, ws: Workspace) -> None:
        from xum.tui.screens import show_review

        await show_review(self.app, ws.record)


def _said(exc: XumError) -> str:
    return exc.message + (f" ({exc.hint})" if exc.hint else "")
