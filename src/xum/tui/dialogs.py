"""Dialogs: create, rename and delete a workspace, pick a model.

Each is a modal screen that returns what the user chose (None when cancelled with Esc); the app
carries it out through the workspace lifecycle. The delete dialog shows the same preview the
browser shows (`lifecycle.deletion_preview`): what goes, what stays, and the uncommitted files
that would be lost, which need an explicit "delete anyway".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import (
    Button,
    Checkbox,
    Input,
    Label,
    OptionList,
    RadioButton,
    RadioSet,
    Select,
    Static,
)
from textual.widgets.option_list import Option

from xum.core.errors import XumError
from xum.engine.display import strip_controls
from xum.workspaces.checkouts.protocol import Removal

if TYPE_CHECKING:
    from xum.runtime.container_engine import EngineInfo
    from xum.workspaces.devcontainer_configs import DevcontainerConfig

DIALOG_CSS = """
ModalScreen { align: center middle; }
ModalScreen > Vertical {
    width: 72; max-width: 100%; height: auto; max-height: 100%;
    border: round $accent; background: $surface; padding: 0 1;
}
ModalScreen .title { text-style: bold; margin-bottom: 1; }
ModalScreen .hint { color: $text-muted; }
ModalScreen Horizontal { height: auto; margin-top: 1; }
ModalScreen Button { margin-right: 1; min-width: 10; }
ModalScreen Input { margin-bottom: 1; }
ModalScreen RadioSet { margin-bottom: 1; }
ModalScreen OptionList { max-height: 16; }
"""


@dataclass(frozen=True)
class NewWorkspace:
    runtime: str  # local, worktree, "ssh <host>", "docker <image>", "devcontainer [<config>]"
    name: str | None
    title: str
    # Docker, Dev Container: the SSH agent, ~/.gitconfig, gh with GH_TOKEN
    share_credentials: bool = False
    external_agent: str | None = None  # an external ACP agent of config.json; None: xum's


class NewWorkspaceDialog(ModalScreen[NewWorkspace | None]):
    """`engine`: asks whether a container engine answers (the runner's `container_engine`);
    the Docker choice, its image field and "Share credentials" appear only once it does, so a
    machine without one never shows a choice that could only fail. `devcontainers`: lists the
    project's devcontainer.json files (the runner's `devcontainer_configs`); the Dev Container
    choice appears only when there is one, with a choice of config when there are several.
    `agents`: lists the external ACP agents, (name, label) (the runner's `external_agents`);
    the agent choice appears only when one is configured."""

    DEFAULT_CSS = DIALOG_CSS
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Cancel")]

    def __init__(
        self,
        engine: Callable[[], Awaitable[EngineInfo]] | None = None,
        devcontainers: Callable[[], Awaitable[list[DevcontainerConfig]]] | None = None,
        agents: Callable[[], Awaitable[list[tuple[str, str]]]] | None = None,
    ) -> None:
        super().__init__()
        self.engine = engine
        self.devcontainers = devcontainers
        self.agents = agents
        self._several = False  # the project has several devcontainer configs: a picker

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("New workspace", classes="title")
            with RadioSet(id="runtime"):
                yield RadioButton("local: in the project directory", value=True, id="local")
                yield RadioButton("worktree: a new git worktree and branch", id="worktree")
                yield RadioButton("ssh: on a remote host", id="ssh")
                yield RadioButton("scratch chat: no project, a folder of its own", id="scratch")
            # The Docker choice's line, held while the engine is asked: nothing below moves
            # when the answer comes (a click aimed at a field lands on that field).
            yield Static("docker: asking the container engine…", id="engine", classes="hint")
            yield Static(
                "devcontainer: looking for devcontainer.json…", id="devnote", classes="hint"
            )
            yield Input(placeholder="SSH host (for ssh)", id="host")
            yield Input(placeholder="image (for docker), e.g. python:3.12", id="image")
            # Filled when the project has several configs (see `_offer_devcontainer`).
            yield Select[str]([], prompt="devcontainer config", allow_blank=True, id="devconfig")
            yield Checkbox(
                "Share credentials with the container (SSH agent, ~/.gitconfig, gh)",
                id="share",
            )
            # Shown once an external agent is configured (see `_offer_agents`); blank: xum.
            yield Select[str]([], prompt="agent: xum", allow_blank=True, id="agent")
            yield Input(placeholder="name (optional; a name is made up otherwise)", id="name")
            yield Input(placeholder="title (optional)", id="title")
            yield Static("Enter creates it · Esc cancels", classes="hint")
            with Horizontal():
                yield Button("Create", variant="primary", id="create")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self._show_fields(None)
        self.query_one("#agent").display = False
        if self.agents is not None:
            self.run_worker(self._offer_agents(self.agents), group="agents", exclusive=True)
        if self.engine is None:
            self.query_one("#engine").display = False
        else:
            self.run_worker(self._offer_docker(self.engine), group="engine", exclusive=True)
        if self.devcontainers is None:
            self.query_one("#devnote").display = False
        else:
            found = self.devcontainers
            self.run_worker(self._offer_devcontainer(found), group="devcontainer", exclusive=True)

    def _show_fields(self, kind: str | None) -> None:
        """The fields of the chosen runtime: the image for Docker, the config for a Dev
        Container with several, "Share credentials" for both."""
        self.query_one("#image").display = kind == "docker"
        self.query_one("#share").display = kind in ("docker", "devcontainer")
        self.query_one("#devconfig").display = kind == "devcontainer" and self._several

    async def _offer_devcontainer(
        self, configs: Callable[[], Awaitable[list[DevcontainerConfig]]]
    ) -> None:
        note = self.query_one("#devnote", Static)
        try:
            found = await configs()
        except XumError:  # no answer (a server that predates the route)
            note.update("devcontainer: not offered (the configs could not be listed)")
            return
        if not found:
            note.update("devcontainer: not offered (the project has no devcontainer.json)")
            return
        picker = self.query_one("#devconfig", Select)
        if len(found) > 1:
            self._several = True
            # The value is what follows `devcontainer` in the runtime spec ("" for the unnamed).
            picker.set_options((f"{c.name or 'default'} ({c.path})", c.name or "") for c in found)
            picker.value = found[0].name or ""
        with self.app.batch_update():
            note.display = False
            await self.query_one("#runtime", RadioSet).mount(
                RadioButton("devcontainer: in the project's Dev Container", id="devcontainer")
            )

    async def _offer_agents(self, agents: Callable[[], Awaitable[list[tuple[str, str]]]]) -> None:
        try:
            found = await agents()
        except XumError:  # no answer (a server that predates the route, a broken config)
            return
        if not found:
            return
        picker = self.query_one("#agent", Select)
        # Labels come from config.json: plain text in the option, never markup.
        picker.set_options((Text(f"agent: {label} (external)"), name) for name, label in found)
        picker.display = True

    async def _offer_docker(self, engine: Callable[[], Awaitable[EngineInfo]]) -> None:
        note = self.query_one("#engine", Static)
        try:
            found = await engine()
        except XumError:  # no answer (a server that predates the route)
            note.update("docker: not offered (the container engine did not answer)")
            return
        if not found.available:
            note.update("docker: not offered (no container engine answers here)")
            return
        # Last in the list (the others keep their places), in the line the note held.
        with self.app.batch_update():
            note.display = False
            button = RadioButton(
                f"docker: in a container ({found.cli} {found.version})", id="docker"
            )
            # Docker before the Dev Container whichever answered first: a steady order.
            devcontainer = self.query("#devcontainer")
            await self.query_one("#runtime", RadioSet).mount(
                button, before=devcontainer.first() if devcontainer else None
            )

    @on(RadioSet.Changed, "#runtime")
    def _runtime_changed(self, event: RadioSet.Changed) -> None:
        self._show_fields(event.pressed.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)

    @on(Input.Submitted)
    @on(Button.Pressed, "#create")
    def _create(self) -> None:
        pressed = self.query_one("#runtime", RadioSet).pressed_button
        kind = pressed.id if pressed is not None and pressed.id else "local"
        share = False
        if kind in ("ssh", "docker"):
            field, what = ("#host", "an SSH host") if kind == "ssh" else ("#image", "an image")
            target = self.query_one(field, Input).value.strip()
            if not target:
                self.notify(f"a {kind} workspace needs {what}", severity="error", markup=False)
                self.query_one(field, Input).focus()
                return
            share = kind == "docker" and self.query_one("#share", Checkbox).value
            kind = f"{kind} {target}"
        elif kind == "devcontainer":
            share = self.query_one("#share", Checkbox).value
            picked = self.query_one("#devconfig", Select).value
            if isinstance(picked, str) and picked:
                kind = f"devcontainer {picked}"
        agent = self.query_one("#agent", Select).value
        external = agent if isinstance(agent, str) and agent else None
        name = self.query_one("#name", Input).value.strip() or None
        title = self.query_one("#title", Input).value.strip()
        self.dismiss(
            NewWorkspace(kind, name, title, share_credentials=share, external_agent=external)
        )

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)


class RenameDialog(ModalScreen[str | None]):
    DEFAULT_CSS = DIALOG_CSS
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Cancel")]

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Rename workspace", classes="title")
            yield Input(value=self.current, id="name")
            yield Static("Enter renames it · Esc cancels", classes="hint")

    def action_dismiss_none(self) -> None:
        self.dismiss(None)

    @on(Input.Submitted)
    def _rename(self, event: Input.Submitted) -> None:
        name = event.value.strip()
        self.dismiss(name if name and name != self.current else None)


def preview_text(name: str, removal: Removal) -> Text:
    """The deletion preview, as the dialog shows it."""
    text = Text()
    text.append(f"Delete {strip_controls(name)}?\n\n", style="bold")
    if removal.removes:
        text.append("Removes:\n")
        for item in removal.removes:
            what = item.path or item.name or ""
            line = f"  - {item.kind}: {what}"
            if item.detail:
                line += f" ({item.detail})"
            text.append(strip_controls(line) + "\n")
    if removal.keeps:
        text.append("Keeps:\n")
        for kept in removal.keeps:
            text.append(f"  - {strip_controls(kept)}\n")
    for warning in removal.warnings:
        text.append(f"! {strip_controls(warning)}\n", style="yellow")
    if removal.dirty:
        shown = removal.dirty[:10]
        text.append(
            f"\nUncommitted files that would be lost ({len(removal.dirty)}):\n", style="bold red"
        )
        for path in shown:
            text.append(f"  {strip_controls(path)}\n", style="red")
        if len(removal.dirty) > len(shown):
            text.append(f"  … {len(removal.dirty) - len(shown)} more\n", style="red")
    text.rstrip()
    return text


class DeleteDialog(ModalScreen[str | None]):
    """Returns "delete", "force" (delete despite uncommitted files) or None."""

    DEFAULT_CSS = DIALOG_CSS
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Cancel")]

    def __init__(self, name: str, removal: Removal) -> None:
        super().__init__()
        self.workspace_name = name
        self.removal = removal

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(preview_text(self.workspace_name, self.removal), id="preview")
            with Horizontal():
                if self.removal.dirty:
                    yield Button("Delete anyway", variant="error", id="force")
                else:
                    yield Button("Delete", variant="error", id="delete")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def action_dismiss_none(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        choice = event.button.id
        self.dismiss(choice if choice in ("delete", "force") else None)


@dataclass(frozen=True)
class Choice:
    value: str  # what the record stores: a model alias or provider:model, an agent id
    label: str


class ChoicePicker(ModalScreen[str | None]):
    """Pick one of `choices` (the current one highlighted); with `typed`, a field below takes a
    value of one's own (its placeholder)."""

    DEFAULT_CSS = DIALOG_CSS
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Cancel")]

    def __init__(
        self, title: str, choices: list[Choice], current: str | None, typed: str | None = None
    ) -> None:
        super().__init__()
        self.title_text = title
        self.choices = choices
        self.current = current
        self.typed = typed

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, classes="title")
            options = [Option(Text(c.label), id=f"c{i}") for i, c in enumerate(self.choices)]
            yield OptionList(*options, id="choices")
            if self.typed is not None:
                yield Input(placeholder=self.typed, id="typed")

    def on_mount(self) -> None:
        listed = self.query_one("#choices", OptionList)
        for i, choice in enumerate(self.choices):
            if choice.value == self.current:
                listed.highlighted = i
        listed.focus()

    def action_dismiss_none(self) -> None:
        self.dismiss(None)

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.choices[event.option_index].value)

    @on(Input.Submitted)
    def _typed(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)
