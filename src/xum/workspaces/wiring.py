"""The wiring of a workspace session: its environment and tool-call middleware, in one call.

The one assembly (`xum.workspaces.assembly.open_workspace_session`) calls it for every session;
nothing else should. `base_env` carries the project's secrets (the engine lays the `XUM_*`
variables over it for every command; the runtime puts both over its own environment, less xum's
own secrets); `middleware` is `build_middleware`'s list. It also says, once, what an untrusted project
is not being allowed to run, and warns when another local workspace of the project is busy.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xum.engine import events as E
from xum.engine.events import EventSink, null_sink
from xum.engine.extensions import ToolMiddleware
from xum.runtime.base import Runtime
from xum.store.registry import WorkspaceRecord
from xum.store.secrets import load_project_secrets
from xum.workspaces import hooks
from xum.workspaces.checkouts.factory import checkout_for
from xum.workspaces.checkouts.protocol import Checkout
from xum.workspaces.init_hook import InitHookRun
from xum.workspaces.middleware import (
    PROJECT_HOOKS_SHOWN,
    TOOL_HOOK_TIMEOUT_S,
    LocalStreamingWarning,
    TrustView,
    build_middleware,
    untrusted_message,
)
from xum.workspaces.safety.approvals import Approver
from xum.workspaces.safety.choice import (
    DEFAULT_CHOICE,
    SafetyChoice,
    SafetyConfigError,
    sandbox_settings,
)
from xum.workspaces.safety.masking import SecretMasker
from xum.workspaces.safety.sandboxing import missing_backend_notice
from xum.workspaces.safety.trust import trust_root


def project_secrets(project_path: str) -> dict[str, str]:
    """The secrets of the project (a linked worktree uses its main repository's, like trust)."""
    return load_project_secrets(str(trust_root(project_path)))


async def withheld_hooks(
    record: WorkspaceRecord,
    runtime: Runtime,
    *,
    trust: TrustView | None = None,
    checkout: Checkout | None = None,
) -> list[str]:
    """Project hooks present in the checkout that trust keeps from running (empty when the
    project is trusted, or automation is switched off on purpose)."""
    if not (trust or TrustView(record.project_path)).untrusted():
        return []
    roots = (checkout or checkout_for(record)).hook_roots()
    found = []
    for name in PROJECT_HOOKS_SHOWN:
        if await hooks.find_project_hook(
            runtime, roots.checkout, name, fallback_root=roots.fallback
        ):
            found.append(name)
    return found


@dataclass(eq=False)
class SessionWiring:
    """What `wire_session` assembled for one session."""

    base_env: dict[str, str]
    middleware: list[ToolMiddleware]
    masker: SecretMasker
    withheld: list[str]  # project hooks not run because the project is not trusted
    safety: SafetyChoice = DEFAULT_CHOICE  # what the front-end chose (children get it too)


async def wire_session(
    record: WorkspaceRecord,
    runtime: Runtime,
    *,
    scratch_dir: Path,
    emit: EventSink = null_sink,
    init: InitHookRun | None = None,
    hook_timeout_s: float = TOOL_HOOK_TIMEOUT_S,
    secrets: dict[str, str] | None = None,
    trust: TrustView | None = None,
    checkout: Checkout | None = None,
    safety: SafetyChoice = DEFAULT_CHOICE,
    approver: Approver | None = None,
) -> SessionWiring:
    """`secrets` and `trust` (see `xum.workspaces.safety.trust`): the project's, when the caller
    has them already (the assembly makes its `TrustView` once per open); otherwise they are looked
    up here. `checkout`: the workspace's, when the caller has it. `safety`: the front-end's
    choices over the user's config (`xum run --sandbox`); `approver`: who answers approval
    requests (the browser), None where nobody can."""
    trust = trust or TrustView(record.project_path)
    checkout = checkout or checkout_for(record)
    if secrets is None:
        secrets = load_project_secrets(trust.root)
    withheld = await withheld_hooks(record, runtime, trust=trust, checkout=checkout)
    told = bool(withheld)
    if withheld:
        emit(E.Advisory(kind="untrusted-project", message=untrusted_message(withheld)))

    def on_withheld(name: str) -> None:
        # A hook that appeared mid-session in an untrusted project: said once too.
        nonlocal told
        if not told:
            told = True
            withheld.append(name)
            emit(E.Advisory(kind="untrusted-project", message=untrusted_message([name])))

    masker = SecretMasker.for_project(secrets)
    warned = False
    if runtime.sees_local_files:  # a remote host's backend is probed at its first command
        try:
            notice = missing_backend_notice(sandbox_settings(safety).mode)
        except SafetyConfigError as exc:
            notice = E.Advisory(kind="sandbox-config", message=f"{exc.message} ({exc.hint})")
        if notice is not None:
            emit(notice)
            warned = True
    middleware = build_middleware(
        record,
        runtime,
        secrets=secrets,
        scratch_dir=scratch_dir,
        emit=emit,
        init=init,
        hook_timeout_s=hook_timeout_s,
        on_withheld=on_withheld,
        trust=trust,
        checkout=checkout,
        masker=masker,
        safety=safety,
        sandbox_warned=warned,
        approver=approver,
    )
    for layer in middleware:
        if isinstance(layer, LocalStreamingWarning):
            layer.check()
    return SessionWiring(
        base_env=dict(secrets),
        middleware=middleware,
        masker=masker,
        withheld=withheld,
        safety=safety,
    )
