"""What a front-end chose for one session's safety boundaries, over the user's own config.

`xum run --sandbox` (and the server, per run) pass a `SafetyChoice` to the assembly; a
sub-agent's session gets its parent's. None in a field: the user's config decides. The config
itself (`$XUM_ROOT/config.json`, user-global) is read where the choice is applied, on every
call, so a change the user makes takes effect on the next command; nothing in a repository can
loosen it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from xum.core.errors import XumError
from xum.store.config import read_config

if TYPE_CHECKING:  # the sandbox module loads with the first command
    from xum.runtime.sandbox_settings import SandboxMode, SandboxSettings


class SafetyConfigError(XumError):
    code = "safety_config_error"


PermissionMode = Literal["auto", "ask", "read-only"]
PERMISSION_MODES: tuple[PermissionMode, ...] = ("auto", "ask", "read-only")
# Who answers an approval request: `ask` a person (the front-end's approver); `never`: nobody is
# asked and the `ask` permission mode runs as `auto` (what needs a person in every mode is
# refused; `read-only` stays read-only); `deny`: nobody is asked and every request is refused
# (the model sees a tool error).
ApprovalPolicy = Literal["ask", "never", "deny"]


@dataclass(frozen=True, slots=True)
class SafetyChoice:
    """What a front-end chose for sandbox, permissions and approvals; None: the default."""

    sandbox: SandboxMode | None = None  # `xum run --sandbox`; None: config.json's
    permissions: PermissionMode | None = None  # `xum run --permissions`; None: the workspace's
    approval: ApprovalPolicy | None = None  # None: `ask` where there is an approver, else `deny`


DEFAULT_CHOICE = SafetyChoice()


def permission_mode(choice: SafetyChoice, workspace_id: str) -> PermissionMode:
    """The mode a call runs in: the front-end's, else the workspace's (read live from the
    registry: the browser's composer changes it between calls), else `auto`. `--approval never`
    turns `ask` into `auto` (nobody would answer); it never lifts `read-only`, which an approval
    policy cannot loosen."""
    mode = choice.permissions
    if mode is None:
        # read_config: parsed only when the file changed (this is asked on every tool call).
        entry = read_config().get("workspaces", {}).get(workspace_id)
        mode = stored_permissions(entry.get("permissions") if isinstance(entry, dict) else None)
    if mode == "ask" and choice.approval == "never":
        return "auto"
    return mode


def stored_permissions(stored: object) -> PermissionMode:
    """A workspace record's `permissions` value as a mode; `auto` for none or an unknown one."""
    return next((mode for mode in PERMISSION_MODES if mode == stored), "auto")


def sandbox_settings(
    choice: SafetyChoice, config: Mapping[str, Any] | None = None
) -> SandboxSettings:
    """The sandbox settings in force: config.json's `sandbox`, with the front-end's mode over
    it. SafetyConfigError when the config's section is malformed (commands refuse rather than
    run with a boundary the user did not mean)."""
    import dataclasses

    from xum.core.paths import config_path
    from xum.runtime.sandbox_settings import parse_settings

    section = (read_config() if config is None else config).get("sandbox")
    try:
        settings = parse_settings(section)
    except ValueError as exc:
        raise SafetyConfigError(
            f"{config_path()}: {exc}",
            hint='fix the "sandbox" section, e.g. {"sandbox": {"mode": "auto", "egress": '
            '"shared"}}; docs/security.md lists the keys',
        ) from None
    if choice.sandbox is not None:
        settings = dataclasses.replace(settings, mode=choice.sandbox)
    return settings
