"""The terminal UI: `xum` in a terminal (and `xum tui`).

Layout: the project's workspaces (with status dots) beside the transcript of the selected one;
the agent's questions, when it asks, above the composer; the composer with the agent, model and
thinking level under it; a status line with the context used and the cost. It opens on a new
workspace with the composer focused, so a message and Enter start work at once.

Sessions run in this process, hosted by `xum.host` as in the server (`runner.py` is the view
over it), several at a time, or, attached to a running `xum server`, on that server
(`attached.py`, the same view over its API and WebSocket); the app renders the one event
vocabulary (`transcript.py` folds it, `views.py` draws it). What the user does to workspaces
(create, fork, rename, archive, delete, change the model) is carried out by `actions.py`
through the host and the workspace lifecycle, as the server's routes do (attached:
`attached_actions.py`, through the server's API).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import ListView, Static

from xum.core.errors import XumError
from xum.engine.display import strip_controls
from xum.tui import history, scratch
from xum.tui.actions import Actions
from xum.tui.completion import Completion
from xum.tui.composer import Composer, Suggestions
from xum.tui.fit import Fit, MoreBelow
from xum.tui.notify import TerminalNotifier
from xum.tui.runner import Runner, Workspace
from xum.tui.sidebar import Sidebar
from xum.tui.statusline import status_line
from xum.tui.theme import initial_theme
from xum.tui.transcript import Change, Transcript
from xum.tui.views import TranscriptView

if TYPE_CHECKING:
    from xum.tui.approval import ApprovalPanel
    from xum.tui.dialogs import NewWorkspace
    from xum.tui.inbox import InboxView
    from xum.tui.question import QuestionPanel
    from xum.workspaces.devcontainer_configs import DevcontainerConfig

POLL_S = 1.0  # how often logs other processes write are followed
REGISTRY_EVERY = 3  # polls between two reads of the workspace list (other processes change it)


class XumApp(App[None]):
    TITLE = "xum"
    CSS = """
    Screen { layout: vertical; }
    #body { height: 1fr; }
    #main { width: 1fr; }
    #bar { height: 1; padding: 0 1; color: $text-muted; }
    #status { height: 1; padding: 0 1; background: $panel; }
    #question-slot { height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "help", "Help"),
        Binding("question_mark", "help", "Help", show=False),
        Binding("ctrl+n", "new_workspace", "New", priority=True),
        Binding("ctrl+shift+n", "new_scratch_chat", "Scratch chat", show=False, priority=True),
        Binding("ctrl+down,alt+down", "next_workspace", "Next", show=False, priority=True),
        Binding("ctrl+up,alt+up", "previous_workspace", "Previous", show=False, priority=True),
        Binding("ctrl+b", "focus_sidebar", "Workspaces", show=False, priority=True),
        Binding("ctrl+o", "toggle_sidebar", "List", show=False, priority=True),
        Binding("ctrl+r", "review", "Review", priority=True),
        Binding("ctrl+l", "inbox", "Inbox", priority=True),
        Binding("ctrl+f", "next_waiting", "Next waiting", show=False, priority=True),
        Binding("f12", "background", "Background", show=False, priority=True),
        Binding("f2", "pick_model", "Model", show=False),
        Binding("f3", "next_thinking", "Thinking", show=False),
        Binding("f4", "toggle_mode", "Plan/Exec", show=False),
        Binding("f5", "retry", "Retry", show=False),
        # Priority: the composer (a TextArea) binds F6 to selecting the line.
        Binding("f6", "next_permissions", "Permissions", show=False, priority=True),
        Binding("ctrl+g", "implement_plan", "Implement plan", show=False, priority=True),
        # Priority: the composer (a TextArea) binds F7 to selecting everything.
        Binding("f7", "start_here", "Start Here", show=False, priority=True),
        Binding("f8", "toggle_theme", "Theme", show=False),
        Binding("f9", "pick_agent", "Agent", show=False),
        Binding("pageup", "scroll_transcript(-1)", show=False, priority=True),
        Binding("pagedown", "scroll_transcript(1)", show=False, priority=True),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(
        self,
        project_dir: Path,
        *,
        workspace: str | None = None,
        attach: Callable[[XumApp], tuple[Runner, Actions]] | None = None,
    ) -> None:
        super().__init__()
        self.project_dir = project_dir.resolve()
        self.project_root = self.project_dir
        self.open_request = workspace
        self.runner: Runner
        self.actions: Actions
        if attach is None:  # sessions run in this process
            self.runner, self.actions = Runner(self), Actions(self)
        else:  # on a server (`attached_actions.attach_to`)
            self.runner, self.actions = attach(self)
        self.runner.on_screen = lambda ws: self.selected is not None and self.selected.id == ws
        self.runner.on_notice = TerminalNotifier.for_app(self).show
        self.selected: Workspace | None = None
        self.draft = Transcript()  # what the new-workspace row shows (notices, errors)
        self.completion = Completion(
            project_root=lambda: self.project_root,
            selected=lambda: self.selected,
            slash=lambda ws: self.actions.slash_suggestions(ws),
            run=lambda work: self.run_worker(work, group="slash"),
            refresh=lambda: self.composer._complete(),
            focused=lambda: self.composer.has_focus,
        )
        self.theme = initial_theme()
        self.ready = asyncio.Event()  # the workspace list is shown
        self._polls = 0
        self._following = False
        self.fit = Fit(self)
        self._listed: list[tuple[str, str, str, str]] = []  # what the list shows

    # Layout ------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            yield Sidebar()
            with Vertical(id="main"):
                yield TranscriptView(id="transcript")
                yield MoreBelow()
                yield Vertical(id="question-slot")
                suggestions = Suggestions()
                yield suggestions
                yield Composer(suggestions, id="composer")
                yield Static(id="bar")
        yield Static(id="status")

    @property
    def composer(self) -> Composer:
        return self.main_screen.query_one(Composer)

    @property
    def transcript_view(self) -> TranscriptView:
        return self.main_screen.query_one(TranscriptView)

    @property
    def sidebar(self) -> Sidebar:
        return self.main_screen.query_one(Sidebar)

    @property
    def main_screen(self) -> Screen[object]:
        """The screen under any dialog: a redraw while a dialog is open still finds its parts."""
        return self.screen_stack[0] if self.screen_stack else self.screen

    def on_mount(self) -> None:
        self.composer.completer = self.completion.complete
        self.composer.focus()
        self.transcript_view.show(self.draft)
        # Before the first frame: the bar names the model a first message runs on.
        self.actions.resolve_default_model()
        self.fit.start()
        self.redraw_bar()
        if self.runner.attached:
            # The server streams statuses and says when its workspace list changes: no polls.
            self.runner.connect()
        else:
            self.set_interval(POLL_S, self._poll)
        # After the first frame: what it needs (the project, its workspaces, the default model)
        # imports the lifecycle and the route, which the first frame does not wait for.
        self.call_after_refresh(self.run_worker, self._start(), exclusive=True, group="start")

    async def _start(self) -> None:
        """After the first frame: find the project and its workspaces, open the one asked for."""
        from xum.workspaces.checkouts.shared import project_root

        self.project_root = await asyncio.to_thread(project_root, self.project_dir)
        kept = await asyncio.to_thread(history.load, str(self.project_root))
        self.composer.sent = [*kept, *self.composer.sent][-history.HISTORY :]
        await self.reload_workspaces()
        if self.open_request is not None:
            ws = self.find_workspace(self.open_request)
            if ws is None:
                self.draft_note(
                    f"no workspace '{self.open_request}' in this project; "
                    "this is a new one (the list on the left has the others)",
                    "warn",
                )
            else:
                await self.select(ws)
        self.ready.set()

    async def reload_workspaces(self, select: str | None = None) -> None:
        try:
            records = await self.runner.list_records(self.project_root)
        except XumError as exc:
            self.draft_note(f"{exc.message} ({exc.hint})" if exc.hint else exc.message, "warn")
            return
        self._listed = [(r.id, r.name, r.title, r.runtime) for r in records]
        shown = [self.runner.track(r) for r in records]
        ids = {r.id for r in records}
        for ws in list(self.runner.workspaces.values()):
            if ws.id not in ids and not ws.running:
                self.runner.forget(ws)
        # Read once the rows are in place: a reload filling meanwhile must not undo a selection.
        await self.sidebar.fill(
            shown, lambda: select or (self.selected.id if self.selected else None)
        )
        chosen = self.runner.workspaces.get(select) if select else None
        if chosen is not None and chosen is not self.selected:
            await self.select(chosen)  # `select` is selected, not only highlighted
        self.redraw_bar()  # a workspace renamed (here or elsewhere) is named so at once

    def find_workspace(self, wanted: str) -> Workspace | None:
        """By id, by name, or `last` (the newest)."""
        listed = [ws for ws in self.runner.workspaces.values() if ws.record.archived_at is None]
        if wanted == "last":
            return max(listed, key=lambda ws: ws.record.created_at, default=None)
        for ws in listed:
            if wanted in (ws.id, ws.record.name):
                return ws
        return None

    # Selecting ---------------------------------------------------------------------------

    async def select(self, ws: Workspace | None) -> None:
        self.selected = ws
        self.sidebar.highlight(ws.id if ws else None)
        if ws is None:
            self.transcript_view.show(self.draft)
        else:
            ws.unread = False
            self.runner.mark_read(ws)
            self.transcript_view.show(ws.transcript)
            self.sidebar.redraw(ws)
            await self.runner.load(ws)
        self.actions.show_question()
        self.redraw_bar()

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        item = event.item
        ws = getattr(item, "workspace", None)
        self.run_worker(self.select(ws), group="select")
        self.fit.picked()
        self.composer.focus()

    def on_list_view_highlighted(self, event: ListView.Highlighted) -> None:
        # Only the row highlighted now selects: a refill may have moved it again since.
        current = event.list_view.highlighted_child
        if event.list_view.has_focus and event.item is not None and event.item is current:
            ws = getattr(event.item, "workspace", None)
            if ws is not self.selected:
                self.run_worker(self.select(ws), group="select")

    def action_next_workspace(self) -> None:
        self._step_workspace(1)

    def action_previous_workspace(self) -> None:
        self._step_workspace(-1)

    def _step_workspace(self, step: int) -> None:
        ids = self.sidebar.ids
        current = self.selected.id if self.selected else None
        index = (ids.index(current) if current in ids else 0) + step
        if 0 <= index < len(ids):
            target = ids[index]
            ws = self.runner.workspaces.get(target) if target else None
            self.run_worker(self.select(ws), group="select")

    def action_focus_sidebar(self) -> None:
        self.fit.show_to_pick()
        self.sidebar.focus()

    def action_focus_composer(self) -> None:
        self.fit.picked()
        self.composer.focus()

    def action_toggle_sidebar(self) -> None:
        self.fit.toggle()

    def on_resize(self, event: events.Resize) -> None:
        # Before Textual's own handler: `self.size` is still the old size here.
        self.fit.resized(event.size.width)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # PageUp/PageDown scroll the transcript (the composer is too small to page), but not
        # from a dialog or the help or review screen, which scroll themselves.
        if action == "scroll_transcript":
            return len(self.screen_stack) == 1
        return True

    def action_scroll_transcript(self, direction: int) -> None:
        view = self.transcript_view
        view.scroll_page_down() if direction > 0 else view.scroll_page_up()

    def action_toggle_theme(self) -> None:
        self.theme = "ansi-light" if self.theme == "ansi-dark" else "ansi-dark"

    def action_inbox(self) -> None:
        from xum.tui.inbox import InboxScreen

        self.push_screen(InboxScreen(self._inbox()), self._open_waiting)

    def action_next_waiting(self) -> None:
        from xum.tui.inbox import next_waiting

        current = self.selected.id if self.selected else None
        self._open_waiting(next_waiting(self._inbox().items(), current))

    def _inbox(self) -> InboxView:
        """This process's inbox; attached to a server, the server's (followed over its
        WebSocket, answered through its inbox routes)."""
        from xum.tui.attached import AttachedRunner

        if isinstance(self.runner, AttachedRunner):
            return self.runner.remote.inbox
        return self.runner.hosts.inbox

    def _open_waiting(self, workspace_id: str | None) -> None:
        ws = self.runner.workspaces.get(workspace_id) if workspace_id else None
        if ws is None and workspace_id is not None:
            self.notify("that workspace is not in this project's list", severity="warning")
        if ws is not None:
            self.run_worker(self.select(ws), group="select")
            self.composer.focus()

    def action_help(self) -> None:
        from xum.tui.screens import HelpScreen

        self.push_screen(HelpScreen())

    # Runner events -----------------------------------------------------------------------

    # While the app ends (`on_unmount` stops the turns still running) the screen is gone:
    # what those turns last do is in their logs, and nothing is drawn.

    def transcript_changed(self, workspace: Workspace, changes: list[Change]) -> None:
        if workspace is self.selected and self.is_running:
            self.transcript_view.apply(changes)
            self.redraw_bar()

    def status_changed(self, workspace: Workspace) -> None:
        if not self.is_running:
            return
        if workspace is self.selected:
            workspace.unread = False
            self.actions.show_question()
            self.redraw_bar()
        self.sidebar.redraw(workspace)

    def _poll(self) -> None:
        """Follow what other processes do: turns they run in our workspaces (their logs), and
        workspaces they create, rename or remove (the registry, every few polls)."""
        if not self._following:  # a slow read (a long log) is not piled up on
            self._following = True
            self.run_worker(self._follow(), group="follow")
        self._polls += 1
        if self._polls % REGISTRY_EVERY == 0 and self.ready.is_set():
            self.run_worker(self._refresh_list(), group="registry", exclusive=True)

    async def _follow(self) -> None:
        try:
            await self.runner.poll_external(list(self.runner.workspaces.values()))
        except Exception as exc:  # a log that cannot be read now: say so, keep going
            self.notify(
                f"cannot follow another process's turn: {exc}", severity="warning", markup=False
            )
        finally:
            self._following = False

    async def list_changed(self) -> None:
        """The server says its workspaces changed (created, renamed, archived, ...)."""
        if self.ready.is_set() and self.is_running:
            await self._refresh_list()

    async def _refresh_list(self) -> None:
        try:
            records = await self.runner.list_records(self.project_root)
        except XumError:
            return  # a server going away: the stream's reconnect lists again
        seen = [(r.id, r.name, r.title, r.runtime) for r in records]
        if seen != self._listed:
            await self.reload_workspaces()

    # The composer ------------------------------------------------------------------------

    def on_composer_submitted(self, message: Composer.Submitted) -> None:
        self.transcript_view.anchor()  # what was sent, and what answers it, are in view
        self.run_worker(self.actions.send(message.text, message.when), group="send")
        self._later(asyncio.to_thread(history.append, str(self.project_root), message.text))

    def on_composer_interrupt(self, _message: Composer.Interrupt) -> None:
        if self.selected is not None:
            self.actions.interrupt(self.selected)

    def put_back(self, unsent: list[str]) -> None:
        self.composer.put_back(unsent)
        if unsent:
            self.notify(f"{len(unsent)} queued message(s) put back in the composer", markup=False)

    def redraw_bar(self) -> None:
        if not self.main_screen.query("#bar"):
            return  # the UI is closing (a worker that ends after the exit redraws nothing)
        ws = self.selected
        agent, model, thinking = self.actions.settings_of(ws)
        bar = Text()
        for name in self.actions.images.names:  # `/image`: what the next message carries
            bar.append(f"[image: {strip_controls(name)}] ", "bold cyan")
        if ws is not None:
            step, turn = ws.queued
            if step or turn:  # first: the bar is cut at the right edge of a narrow terminal
                bar.append(f"queued: {step} step, {turn} turn", "bold yellow")
                bar.append(" · ")
        external = ws.record.external_agent if ws is not None else None
        if external:  # an external ACP agent: its own model and loop, none of xum's settings
            bar.append(f"{strip_controls(external)} (external agent)", style="bold")
        else:
            bar.append(agent.capitalize(), style="bold magenta" if agent == "plan" else "bold")
            bar.append(f" · {strip_controls(model)} · thinking {thinking}")
        permissions = self.actions.permissions_of(ws)
        if permissions != "auto":  # the default is not worth the room on a narrow terminal
            bar.append(" · ")
            bar.append(permissions, style="bold red" if permissions == "ask" else "bold cyan")
        self.main_screen.query_one("#bar", Static).update(bar)
        width = max(self.size.width - 2, 1)  # the status line's padding
        line = status_line(ws, width, list_hidden=self.fit.list_hidden)
        self.main_screen.query_one("#status", Static).update(line)

    def draft_note(self, text: str, level: str = "info") -> None:
        changes = self.draft.note(text, "warn" if level == "warn" else "info")
        if self.selected is None:
            self.transcript_view.apply(changes)

    # Actions (carried out by `actions.py`) ------------------------------------------------

    def _later(self, work: Coroutine[Any, Any, None]) -> None:
        self.run_worker(work, group="lifecycle")

    def action_new_workspace(self) -> None:
        from xum.tui.dialogs import NewWorkspaceDialog

        def chosen(choice: NewWorkspace | None) -> None:
            self._later(scratch.new_workspace(self, choice))

        runner, project = self.runner, self.project_dir

        async def devcontainers() -> list[DevcontainerConfig]:
            return await runner.devcontainer_configs(project)

        dialog = NewWorkspaceDialog(runner.container_engine, devcontainers, runner.external_agents)
        self.push_screen(dialog, chosen)

    def action_new_scratch_chat(self) -> None:
        self._later(scratch.start_draft(self))

    def _needs_workspace(self, action: str) -> Workspace | None:
        if self.selected is None:
            self.notify(f"select a workspace to {action} (Ctrl+B goes to the list)", markup=False)
        return self.selected

    def action_fork(self) -> None:
        if self._needs_workspace("fork") is not None:
            self._later(self._fork())

    async def _fork(self) -> None:
        await self.actions.fork(None)

    def action_rename(self) -> None:
        from xum.tui.dialogs import RenameDialog

        ws = self._needs_workspace("rename")
        if ws is None:
            return

        def chosen(name: str | None) -> None:
            self._later(self.actions.rename(ws, name))

        self.push_screen(RenameDialog(ws.record.name), chosen)

    def action_archive(self) -> None:
        ws = self._needs_workspace("archive")
        if ws is not None:
            self._later(self.actions.archive(ws))

    def action_unarchive(self) -> None:
        self._later(self._pick_archived())

    async def _pick_archived(self) -> None:
        from xum.tui.dialogs import Choice, ChoicePicker

        found = await self.actions.archived_choices()
        if not found:
            self.notify("no archived workspace in this project", markup=False)
            return

        def chosen(workspace_id: str | None) -> None:
            if workspace_id is not None:
                self._later(self.actions.unarchive(workspace_id))

        choices = [Choice(workspace_id, label) for workspace_id, label in found]
        self.push_screen(ChoicePicker("Unarchive", choices, None), chosen)

    def action_delete(self) -> None:
        ws = self._needs_workspace("delete")
        if ws is not None:
            self._later(self.actions.deletion_preview(ws))

    def action_review(self) -> None:
        ws = self._needs_workspace("review")
        if ws is not None:
            self._later(self.actions.review(ws))

    def action_background(self) -> None:
        from xum.tui.background import BackgroundScreen

        if (ws := self._needs_workspace("list the background processes of")) is not None:
            self.push_screen(BackgroundScreen.of(self.runner, ws))

    def action_pick_model(self) -> None:
        from xum.tui.dialogs import Choice, ChoicePicker

        ws = self.selected
        current = ws.record.model if ws else self.actions.draft_model
        choices = [Choice(m, label) for m, label in self.actions.model_choices()]

        def chosen(model: str | None) -> None:
            if model is not None:
                self._later(self._set_model(ws, model))

        typed = "or type provider:model and Enter"
        self.push_screen(ChoicePicker("Model", choices, current, typed), chosen)

    def action_pick_agent(self) -> None:
        self._later(self._pick_agent())

    async def _pick_agent(self) -> None:
        from xum.tui.dialogs import Choice, ChoicePicker

        ws = self.selected
        found = await self.actions.agent_choices(ws)
        if not found:
            return
        choices = [Choice(agent_id, label) for agent_id, label in found]

        def chosen(agent: str | None) -> None:
            if agent is not None:
                self._later(self.actions.set_agent(ws, agent))

        current = self.actions.settings_of(ws)[0]
        self.push_screen(ChoicePicker("Agent", choices, current), chosen)

    async def _set_model(self, ws: Workspace | None, model: str) -> None:
        await self.actions.set_model(ws, model)

    def action_next_thinking(self) -> None:
        self._later(self.actions.next_thinking())

    def action_toggle_mode(self) -> None:
        self._later(self.actions.toggle_mode())

    def action_next_permissions(self) -> None:
        self._later(self.actions.next_permissions())

    def action_retry(self) -> None:
        self._later(self.actions.retry())

    def action_start_here(self) -> None:
        self._later(self.actions.start_here())

    def action_implement_plan(self) -> None:
        self._later(self.actions.implement_plan())

    def on_question_panel_answered(self, message: QuestionPanel.Answered) -> None:
        self.actions.answered(message.panel, message.answers)

    def on_approval_panel_decided(self, message: ApprovalPanel.Decided) -> None:
        self.actions.decided(message.panel, message.answer)

    # Quitting ----------------------------------------------------------------------------

    async def action_quit(self) -> None:
        running = [ws for ws in self.runner.workspaces.values() if ws.running]
        if running and not self.runner.attached:  # attached, the server's turns go on
            self.notify(f"stopping {len(running)} turn(s)…", markup=False)
        await self.runner.shutdown()
        self.exit()

    async def on_unmount(self) -> None:
        # However the app ends (quit, a crash, the test pilot leaving), no turn outlives it:
        # each is interrupted and recorded as such, and every session's parts are closed.
        await self.runner.shutdown()
