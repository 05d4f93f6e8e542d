"""Scratch chats in the terminal UI (docs/workspaces.md, docs/tui.md): Ctrl+Shift+N (in
terminals that report it apart from Ctrl+N) or "scratch chat" in the new-workspace dialog turns
the draft row into a new scratch chat, which is made, with its private folder, by the first
message sent there; nothing is made before. Chats are listed with the project's workspaces."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from xum.core.errors import XumError

if TYPE_CHECKING:
    from xum.tui.dialogs import NewWorkspace
    from xum.tui.runner import Runner, Workspace


# What this module needs of the app, named here so that it does not import the app (which
# imports it): the draft's settings on the app's actions, and a few of the app's own calls.
class DraftSettings(Protocol):
    draft_scratch: bool

    async def new_workspace(self, choice: NewWorkspace | None) -> None: ...

    @property
    def draft_agent(self) -> str: ...

    @property
    def draft_permissions(self) -> str: ...

    @property
    def draft_model(self) -> str | None: ...

    @property
    def draft_thinking(self) -> str | None: ...


class Focusable(Protocol):
    def focus(self) -> object: ...


class ScratchApp(Protocol):
    @property
    def actions(self) -> DraftSettings: ...

    @property
    def runner(self) -> Runner: ...

    @property
    def composer(self) -> Focusable: ...

    async def select(self, ws: Workspace | None) -> None: ...

    async def reload_workspaces(self, select: str | None = None) -> None: ...

    def draft_note(self, text: str, level: str = "info") -> None: ...


async def new_workspace(app: ScratchApp, choice: NewWorkspace | None) -> None:
    """The new-workspace dialog's choice: a scratch chat's draft, or any other kind at once."""
    if choice is not None and choice.runtime == "scratch":
        return await start_draft(app)
    app.actions.draft_scratch = False
    await app.actions.new_workspace(choice)


async def start_draft(app: ScratchApp) -> None:
    """The draft row now makes a scratch chat with its first message."""
    app.actions.draft_scratch = True
    await app.select(None)
    app.draft_note(
        "new scratch chat: no project and no git, a private folder under $XUM_ROOT/chats; it "
        "is made when you send the first message"
    )
    app.composer.focus()


async def create_chat(app: ScratchApp, title: str) -> Workspace | None:
    """Make the chat the draft's first message goes to, with the draft's settings."""
    actions = app.actions
    fields: dict[str, object] = {"agent": actions.draft_agent}
    if actions.draft_permissions != "auto":
        fields["permissions"] = actions.draft_permissions
    if actions.draft_model is not None:
        fields["model"] = actions.draft_model
    if actions.draft_thinking is not None:
        fields["thinking"] = actions.draft_thinking
    try:
        ws = await app.runner.create_scratch(title=title, **fields)
    except XumError as exc:
        app.draft_note(f"cannot create the scratch chat: {exc.message}", "warn")
        return None
    actions.draft_scratch = False
    await app.reload_workspaces(select=ws.id)  # and selects it
    return ws
