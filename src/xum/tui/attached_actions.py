"""What the terminal UI does on the user's behalf while attached to a server (`attached.py`).

The same actions as `actions.py`, carried out by the server through its API wherever they touch
a workspace: its default model, model and permission changes (the server validates them), the
agent picker's list, `/idle`, the `/` menu, rename, archive, unarchive and delete (with the
server's deletion preview), and the review view (from the server's git routes: git runs where
the checkout is, which need not be this machine).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from xum.core.errors import XumError
from xum.engine.display import strip_controls
from xum.tui.actions import Actions
from xum.tui.attached import AttachedRunner
from xum.tui.composer import Suggestion
from xum.tui.runner import Runner, Workspace

if TYPE_CHECKING:
    from xum.context.slash import IdleCommand
    from xum.host.server_target import ServerTarget
    from xum.tui.app import XumApp
    from xum.workspaces.checkouts.protocol import Removal
    from xum.workspaces.review import Review


def attach_to(target: ServerTarget) -> Callable[[XumApp], tuple[Runner, Actions]]:
    """What `XumApp(attach=...)` runs on: the server at `target` (made here, not in app.py,
    so the app module does not import the attached path it may never use)."""

    def attach(app: XumApp) -> tuple[Runner, Actions]:
        runner = AttachedRunner(app, target, app.list_changed)
        return runner, AttachedActions(app, runner)

    return attach


class AttachedActions(Actions):
    def __init__(self, app: XumApp, runner: AttachedRunner) -> None:
        super().__init__(app)
        self.attached = runner
        self.remote = runner.remote

    def _notify_problem(self, exc: XumError) -> None:
        self.app.notify(_said(exc), severity="error", markup=False)

    def interrupt(self, ws: Workspace) -> None:
        """Esc: the server stops its turn and hands back what was queued."""
        self.app.run_worker(self._stop(ws), group="interrupt")

    async def _stop(self, ws: Workspace) -> None:
        try:
            unsent = await self.attached.stop_turn(ws)
        except XumError as exc:
            self._notify_problem(exc)
            return
        if unsent is not None:
            self.app.put_back(unsent)

    # Settings ----------------------------------------------------------------------------

    def resolve_default_model(self) -> None:
        """The server's default model, asked for after the first frame (and the UI says
        where its sessions run)."""
        self.default_model = self.default_problem = None
        self.app.notify(f"attached to the xum server at {self.remote.target.url}", markup=False)
        self.app.run_worker(self._server_default(), group="default-model")

    async def _server_default(self) -> None:
        try:
            self.default_model = await self.remote.default_model()
        except XumError as exc:
            self.default_problem = exc.message
            self.app.draft_note(_said(exc), "warn")
        if self.default_model is None and self.default_problem is None:
            self.default_problem = "the server has no model configured"
        self.app.redraw_bar()

    async def set_model(self, ws: Workspace | None, text: str) -> bool:
        """The server validates the model (its catalog and providers are the ones that run)."""
        if ws is None:
            self.draft_model = text.strip()  # checked when the first message creates it
        else:
            try:
                await self._update(ws, model=text.strip())
            except XumError as exc:
                self._notify_problem(exc)
                return False
        self.app.redraw_bar()
        return True

    async def _update(self, ws: Workspace, **changes: str) -> None:
        try:
            await super()._update(ws, **changes)
        except XumError as exc:
            if "model" in changes:
                raise  # `set_model` says so and answers False
            self._notify_problem(exc)

    async def next_permissions(self) -> None:
        from xum.workspaces.safety.choice import PERMISSION_MODES

        ws = self.app.selected
        current = self.permissions_of(ws)
        new = PERMISSION_MODES[(PERMISSION_MODES.index(current) + 1) % len(PERMISSION_MODES)]
        if ws is None:
            self.draft_permissions = new
        else:
            await self._update(ws, permissions=new)
        self.app.redraw_bar()

    async def agent_choices(self, ws: Workspace | None) -> list[tuple[str, str]]:
        if ws is None:  # no workspace on the server yet to read its agent catalog from
            return [("exec", "Exec"), ("plan", "Plan")]
        try:
            agents = await self.remote.agents(ws.id)
        except XumError as exc:
            self._notify_problem(exc)
            return []
        out = []
        for agent in agents:
            agent_id = str(agent.get("id", ""))
            label = strip_controls(str(agent.get("name") or agent_id))
            if agent.get("description"):
                label += " — " + strip_controls(str(agent["description"]))
            out.append((agent_id, label))
        return out

    # Commands ----------------------------------------------------------------------------

    async def _idle_command(self, command: IdleCommand) -> None:
        """`/idle` goes to the server with a workspace of the project (it sets the project's
        idle compaction)."""
        app = self.app
        ws = app.selected
        if ws is None:
            self._problem("/idle needs a workspace here: select one (the setting is the project's)")
            return
        try:
            sent = await self.remote.send_message(ws.id, command.typed)
        except XumError as exc:
            self._problem(exc.message, exc.hint)
            return
        hours = sent.idle_hours
        said = "off" if hours is None else f"after {hours:g} idle hour(s)"
        app.notify(f"idle compaction: {said}", markup=False)

    async def slash_suggestions(self, ws: Workspace | None) -> list[Suggestion]:
        from xum.host import commands

        if ws is None:  # the chat commands; skills come with the workspace
            return [
                Suggestion(s.name + " ", f"{s.name} {s.argument_hint}".strip(), s.description)
                for s in commands.suggestions("tui")
            ]
        offered = {s.name for s in commands.suggestions("tui")}
        try:
            listed = await self.remote.slash_commands(ws.id)
        except XumError as exc:
            self._notify_problem(exc)
            return []
        out = []
        for entry in listed:
            name = str(entry.get("name", ""))
            if entry.get("kind") == "command" and name not in offered:
                continue
            usage = str(entry.get("usage") or "")
            insert = name if name.endswith("+") else name + " "
            out.append(
                Suggestion(insert, f"{name} {usage}".strip(), str(entry.get("description") or ""))
            )
        return out

    # Workspaces --------------------------------------------------------------------------

    async def rename(self, ws: Workspace, name: str | None) -> None:
        if name is None or not self._idle(ws, "rename"):
            return
        try:
            ws.record = await self.remote.rename(ws.id, name)
        except XumError as exc:
            self._notify_problem(exc)
            return
        await self.app.reload_workspaces(select=ws.id)

    async def archive(self, ws: Workspace) -> None:
        if not self._idle(ws, "archive"):
            return
        try:
            await self.remote.archive(ws.id)
        except XumError as exc:
            self._notify_problem(exc)
            return
        await self.app.runner.close(ws)
        self.app.notify(f"archived {ws.record.name}", markup=False)
        await self._gone(ws)

    async def unarchive(self, workspace_id: str) -> None:
        try:
            record = await self.remote.unarchive(workspace_id)
        except XumError as exc:
            self._notify_problem(exc)
            return
        self.app.notify(f"unarchived {record.name}", markup=False)
        await self.app.reload_workspaces(select=record.id)

    async def deletion_preview(self, ws: Workspace) -> None:
        from xum.tui.dialogs import DeleteDialog

        if not self._idle(ws, "delete"):
            return
        try:
            removal = _removal(await self.remote.deletion_preview(ws.id))
        except XumError as exc:
            self._notify_problem(exc)
            return

        def chosen(choice: str | None) -> None:
            if choice is not None:
                self.app.run_worker(self.delete(ws, force=choice == "force"), group="lifecycle")

        self.app.push_screen(DeleteDialog(ws.record.name, removal), chosen)

    async def delete(self, ws: Workspace, *, force: bool) -> None:
        try:
            notes = await self.remote.delete(ws.id, force=force)
        except XumError as exc:
            self._notify_problem(exc)
            return
        await self.app.runner.close(ws)
        said = "; ".join(notes)
        self.app.notify(f"deleted {ws.record.name}" + (f" ({said})" if said else ""), markup=False)
        await self._gone(ws)

    async def review(self, ws: Workspace) -> None:
        """The review view, from the server's git routes (git runs where the checkout is)."""
        from xum.tui.screens import ReviewScreen

        try:
            status, diff = await self.remote.git_review(ws.id)
        except XumError as exc:
            self._notify_problem(exc)
            return
        self.app.push_screen(ReviewScreen(ws.record.name, _review(status, diff)))


def _said(exc: XumError) -> str:
    return exc.message + (f" ({exc.hint})" if exc.hint else "")


def _removal(data: dict[str, object]) -> Removal:
    """The server's deletion preview as the lifecycle's own record (the dialog draws it)."""
    from xum.workspaces.checkouts.protocol import Removal, RemovalItem

    def texts(key: str) -> list[str]:
        found = data.get(key)
        return [str(v) for v in found] if isinstance(found, list) else []

    items = []
    removes = data.get("removes")
    for raw in removes if isinstance(removes, list) else []:
        if isinstance(raw, dict):
            items.append(
                RemovalItem(
                    kind=raw.get("kind", "record"),
                    path=raw.get("path"),
                    name=raw.get("name"),
                    detail=raw.get("detail"),
                )
            )
    return Removal(
        removes=items, keeps=texts("keeps"), warnings=texts("warnings"), dirty=texts("dirtyFiles")
    )


def _review(status: dict[str, Any], diff: dict[str, Any]) -> Review:
    """The server's git status and diff as the review view's own record."""
    from xum.workspaces import gitinfo
    from xum.workspaces.review import Review

    if not status.get("isGit"):
        return Review(is_git=False)
    raw_base = status.get("base")
    base = None
    if isinstance(raw_base, dict):
        base = gitinfo.Base(str(raw_base.get("ref", "")), str(raw_base.get("sha", "")))
    entries = [
        gitinfo.StatusEntry(
            str(e.get("path", "")),
            str(e.get("index", " ")),
            str(e.get("worktree", " ")),
            e.get("origPath"),
        )
        for e in status.get("entries") or []
        if isinstance(e, dict)
    ]
    files = [
        gitinfo.FileStat(
            str(f.get("path", "")),
            int(f.get("additions") or 0),
            int(f.get("deletions") or 0),
            bool(f.get("binary")),
            bool(f.get("untracked")),
        )
        for f in diff.get("files") or []
        if isinstance(f, dict)
    ]
    return Review(
        is_git=True,
        branch=status.get("branch"),
        base=base,
        ahead=int(status.get("ahead") or 0),
        behind=int(status.get("behind") or 0),
        entries=entries,
        files=files,
        diff=str(diff.get("diff") or ""),
        truncated=bool(status.get("truncated")) or bool(diff.get("truncated")),
    )
