"""The tool-call middleware of a workspace: init wait, approvals, hooks, the sandbox, secret
masking, local warnings.

`build_middleware` assembles it; front-ends pass the list to `AgentSession(middleware=...)`.
Order matters: `before_tool` runs in list order and `after_tool` too. Live output masking
(`LiveOutputMasking`) comes first, so every later layer and the tool only ever get a masking
`open_output` (the hooks' live streams included); result masking (`MaskingMiddleware`) comes
last, after `tool_post` appended its output. A call blocked by `tool_pre` skips the later
layers, so the hook layer masks its own block message.

No layer changes what it is given: a changed context is returned (`dataclasses.replace`) and
a changed result is a new `ToolResult`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from xum.engine import events as E
from xum.engine.events import EventSink, null_sink
from xum.engine.extensions import ToolCall, ToolMiddleware
from xum.runtime.base import Runtime
from xum.store import registry
from xum.store.registry import WorkspaceRecord
from xum.workspaces import hooks
from xum.workspaces.busy import streaming_local_siblings
from xum.workspaces.checkouts.factory import checkout_for
from xum.workspaces.checkouts.protocol import Checkout
from xum.workspaces.init_hook import InitHookRun
from xum.workspaces.safety.approvals import ApprovalMiddleware, Approver
from xum.workspaces.safety.choice import DEFAULT_CHOICE, SafetyChoice
from xum.workspaces.safety.masking import SecretMasker
from xum.workspaces.safety.sandboxing import SandboxMiddleware
from xum.workspaces.safety.trust import automation_disabled, trust_root

if TYPE_CHECKING:  # the tool machinery loads with the first tool call, not at start-up
    from xum.tools.base import OutputStream, ToolContext, ToolResult

TOOL_HOOK_TIMEOUT_S = 10.0
LOCAL_CHECK_INTERVAL_S = 5.0
LOCAL_SHARED_SCAN_S = 1.0
PROJECT_HOOKS_SHOWN = ("init", "tool_pre", "tool_post", "tool_env", "archive", "delete")


def untrusted_message(withheld: list[str]) -> str:
    names = ", ".join(f".xum/{n}" for n in withheld)
    return (
        f"this project is not trusted: {names} "
        f"{'was' if len(withheld) == 1 else 'were'} not run; "
        "run `xum trust` in the project to allow them (review them first: they run as you)"
    )


class TrustView:
    """Live trust of one project: the registry is read on every question, so `xum trust` (or a
    revoke) in another process takes effect on the next tool call."""

    def __init__(self, project_path: str, *, root: Path | None = None) -> None:
        """`root`: the project's `trust_root`, when the caller knows it (saves a git call)."""
        self.root = str(root or trust_root(project_path))

    def allowed(self) -> bool:
        if automation_disabled():
            return False
        record = registry.get_project(self.root)
        return record is not None and record.trusted

    def untrusted(self) -> bool:
        """Not trusted (as opposed to disabled by XUM_DISABLE_PROJECT_AUTOMATION)."""
        record = registry.get_project(self.root)
        return record is None or not record.trusted


class InitGate:
    """The first tool call of a session waits for the workspace's init hook to finish."""

    def __init__(self, init: InitHookRun, emit: EventSink) -> None:
        self.init = init
        self.emit = emit
        self._reported = False

    async def before_tool(
        self, call: ToolCall, ctx: ToolContext
    ) -> ToolResult | ToolContext | None:
        if self._reported:
            return None
        if not self.init.done:
            self.emit(
                E.Advisory(
                    kind="init-hook-wait",
                    message=f"waiting for {self.init.hook.display} to finish before running tools",
                )
            )
        await self.init.wait()
        self._reported = True
        if not self.init.ok:
            self.emit(
                E.Advisory(
                    kind="init-hook-failed",
                    message=f"{self.init.describe()}; the workspace is usable, but its setup "
                    "may be incomplete (output: ~/.xum/logs/init/"
                    f"{self.init.workspace_id}.log)",
                )
            )
        return None

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        return result


class LocalStreamingWarning:
    """A local workspace shares its files with the project's other local workspaces: warn (once
    per other workspace) when one of them is running a turn while this one runs tools."""

    def __init__(self, record: WorkspaceRecord, emit: EventSink) -> None:
        self.record = record
        self.emit = emit
        self._warned: set[str] = set()
        self._checked_at = 0.0
        self._scanned = False

    def check(self) -> None:
        # The session's first check scans afresh; later ones take a scan another session of
        # the project made within the last LOCAL_SHARED_SCAN_S (one walk of the project's
        # workspaces per period for the whole fleet, not one per session).
        max_age = LOCAL_SHARED_SCAN_S if self._scanned else 0.0
        self._scanned = True
        self._checked_at = time.monotonic()
        for other in streaming_local_siblings(self.record, max_age_s=max_age):
            if other.id in self._warned:
                continue
            self._warned.add(other.id)
            self.emit(
                E.Advisory(
                    kind="local-workspace-streaming",
                    workspace_id=other.id,
                    message=f"another local workspace of this project ('{other.name}') is "
                    "running an agent right now; both edit the same files, so changes may "
                    "conflict (a worktree workspace avoids this)",
                )
            )

    async def before_tool(
        self, call: ToolCall, ctx: ToolContext
    ) -> ToolResult | ToolContext | None:
        if time.monotonic() - self._checked_at >= LOCAL_CHECK_INTERVAL_S:
            self.check()
        return None

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        return result


class HookMiddleware:
    """`tool_pre`, `tool_post` and `tool_env`, project first (trusted projects only), then the
    user's own in `$XUM_ROOT`."""

    def __init__(
        self,
        record: WorkspaceRecord,
        runtime: Runtime,
        *,
        trust: TrustView,
        masker: SecretMasker,
        staging_dir: Path,
        timeout_s: float,
        emit: EventSink,
        on_withheld: Callable[[str], None],
        checkout: Checkout | None = None,
    ) -> None:
        self.record = record
        self.runtime = runtime
        self.trust = trust
        self.masker = masker
        self.timeout_s = timeout_s
        self.emit = emit
        self.on_withheld = on_withheld
        self.staging = hooks.RemoteStaging(runtime, staging_dir, record.id)
        roots = (checkout or checkout_for(record)).hook_roots()
        self.checkout, self.fallback = roots.checkout, roots.fallback

    async def find(self, name: str) -> hooks.HookScript | None:
        if self.trust.allowed():
            found = await hooks.find_project_hook(
                self.runtime, self.checkout, name, fallback_root=self.fallback
            )
            if found is not None:
                return found
        elif self.trust.untrusted() and await hooks.find_project_hook(
            self.runtime, self.checkout, name, fallback_root=self.fallback
        ):
            self.on_withheld(name)
        user = hooks.find_user_hook(name)
        return await self.staging.user_hook(user) if user is not None else None

    def _base_env(self, call: ToolCall, ctx: ToolContext, input_path: str) -> dict[str, str]:
        from xum.workspaces.flatten import flatten  # hooks only, off start-up

        env = dict(ctx.env)
        env.update(flatten(_parsed(call.arguments), "XUM_TOOL_INPUT"))
        env.update(
            {
                "XUM_TOOL": call.name,
                "XUM_WORKSPACE_ID": self.record.id,
                "XUM_TOOL_INPUT_PATH": input_path,
            }
        )
        return env

    async def before_tool(
        self, call: ToolCall, ctx: ToolContext
    ) -> ToolResult | ToolContext | None:
        changed = ctx
        if call.name == "bash":
            tool_env = await self.find("tool_env")
            env_source = tool_env.path if tool_env is not None else None
            if env_source != ctx.env_source:
                changed = dataclasses.replace(ctx, env_source=env_source)
        hook = await self.find("tool_pre")
        if hook is None:
            return changed if changed is not ctx else None
        input_path = await self.staging.write("input", _input_bytes(call.arguments))
        staged = [input_path]
        live = _open(ctx, "hook:tool_pre")
        try:
            result = await hooks.run_hook(
                self.runtime,
                hook,
                env=self._base_env(call, ctx, input_path),
                cwd=self.runtime.workspace_path,
                timeout_s=self.timeout_s,
                stderr_only=True,
                cleanup=staged if self.staging.remote else (),
                on_output=live.write if live is not None else None,
            )
        finally:
            self.staging.forget(staged)
            if live is not None:
                live.close()
        if result.ok:
            return changed if changed is not ctx else None
        hooks.log_hook(self.record.id, result, mask=self.masker.mask)
        said = result.output.strip()
        from xum.tools.base import ToolResult

        message = f"blocked by {hook.display}: {result.outcome()}, so {call.name} did not run."
        if said:
            message += f"\n{said}"
        return ToolResult(
            output=self.masker.mask(message),
            is_error=True,
            meta={
                "blocked_by": hook.display,
                "hook_exit_code": result.exit_code,
                "hook_timed_out": result.timed_out,
            },
        )

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        hook = await self.find("tool_post")
        if hook is None:
            return result
        from xum.workspaces.flatten import flatten

        document: dict[str, Any] = {"output": result.output, "is_error": result.is_error}
        for key, value in result.meta.items():
            document.setdefault(key, value)
        input_path = await self.staging.write("input", _input_bytes(call.arguments))
        result_path = await self.staging.write("result", orjson.dumps(document, default=str))
        staged = [input_path, result_path]
        env = self._base_env(call, ctx, input_path)
        env.update(flatten(document, "XUM_TOOL_RESULT"))
        env["XUM_TOOL_RESULT_PATH"] = result_path
        live = _open(ctx, "hook:tool_post")
        try:
            ran = await hooks.run_hook(
                self.runtime,
                hook,
                env=env,
                cwd=self.runtime.workspace_path,
                timeout_s=self.timeout_s,
                cleanup=staged if self.staging.remote else (),
                on_output=live.write if live is not None else None,
            )
        finally:
            self.staging.forget(staged)
            if live is not None:
                live.close()
        said = ran.output.strip()
        if not ran.ok:
            hooks.log_hook(self.record.id, ran, mask=self.masker.mask)
            said = f"{ran.describe()}\n{said}".strip()
        if not said:
            return result
        # A new result: the one the tool returned stays as it was.
        output = f"{result.output}\n\n<hook_output>\n{said}\n</hook_output>"
        meta = {**result.meta, "hook_output": said}
        if not ran.ok:
            meta["hook_exit_code"] = ran.exit_code
        return dataclasses.replace(result, output=output, meta=meta)


class LiveOutputMasking:
    """Masks secret values in every live output stream of a call, and in the output commands
    keep (results, spill files: `output_filter`): the call's `open_output` is replaced by one
    whose streams mask (holding back a possible start of a secret until the next
    write or the stream's close). First in the list, so hooks and tools cannot get around it."""

    def __init__(self, masker: SecretMasker) -> None:
        self.masker = masker

    async def before_tool(
        self, call: ToolCall, ctx: ToolContext
    ) -> ToolResult | ToolContext | None:
        # xum's own secrets may have changed since the last call (a server started on this
        # root and left its token on disk): this call masks what is there now.
        self.masker.refresh()
        if not self.masker.active:
            return None
        # The live streams, and what a command's output leaves on disk (its spill file).
        opener = self.masker.opener(ctx.open_output) if ctx.open_output is not None else None
        return dataclasses.replace(ctx, open_output=opener, output_filter=self.masker.stream)

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        return result


class MaskingMiddleware:
    """Replaces secret values with `[secret:NAME]` in results (last in the list, so after
    `tool_post` appended its output)."""

    def __init__(self, masker: SecretMasker) -> None:
        self.masker = masker

    async def before_tool(
        self, call: ToolCall, ctx: ToolContext
    ) -> ToolResult | ToolContext | None:
        return None

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        if not self.masker.active:
            return result
        return dataclasses.replace(
            result,
            output=self.masker.mask(result.output),
            meta=self.masker.mask_value(result.meta),
        )


def _open(ctx: ToolContext, name: str) -> OutputStream | None:
    return ctx.open_output(name) if ctx.open_output is not None else None


def _parsed(arguments: str) -> Any:
    try:
        return orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        return None


def _input_bytes(arguments: str) -> bytes:
    parsed = _parsed(arguments)
    return orjson.dumps(parsed) if parsed is not None else (arguments or "").encode()


def build_middleware(
    record: WorkspaceRecord,
    runtime: Runtime,
    *,
    secrets: Mapping[str, str],
    scratch_dir: Path,
    emit: EventSink = null_sink,
    init: InitHookRun | None = None,
    hook_timeout_s: float = TOOL_HOOK_TIMEOUT_S,
    on_withheld: Callable[[str], None] | None = None,
    trust: TrustView | None = None,
    checkout: Checkout | None = None,
    masker: SecretMasker | None = None,
    safety: SafetyChoice = DEFAULT_CHOICE,
    sandbox_warned: bool = False,
    approver: Approver | None = None,
) -> list[ToolMiddleware]:
    """The middleware list for an AgentSession on this workspace.

    `init`: the workspace's running init hook, if any (the first tool call waits for it).
    `on_withheld(hook_name)`: called when a tool call finds a project hook that trust withholds.
    `trust`: the project's TrustView, when the caller made one already; `checkout`: the
    workspace's checkout, likewise.
    `masker`: the session's masker, when the caller made one already (else one for `secrets`
    and xum's own).
    `trust`: the project's TrustView, when the caller made one already. `safety`: the
    front-end's choices over the user's config (the sandbox mode, the permission mode, the
    approval policy); `sandbox_warned`: the session already said that the sandbox is unavailable;
    `approver`: who answers approval requests (the browser), None where nobody can.
    """
    masker = masker or SecretMasker.for_project(secrets)
    layers: list[ToolMiddleware] = [LiveOutputMasking(masker)]
    if init is not None:
        layers.append(InitGate(init, emit))
    checkout = checkout or checkout_for(record)
    if checkout.shares_project_dir:
        layers.append(LocalStreamingWarning(record, emit))
    trust = trust or TrustView(record.project_path)
    # Before the hooks: a call that is not approved never reaches `tool_pre`.
    layers.append(
        ApprovalMiddleware(
            record.id, project_root=trust.root, emit=emit, choice=safety, approver=approver
        )
    )
    layers.append(
        HookMiddleware(
            record,
            runtime,
            trust=trust,
            masker=masker,
            staging_dir=scratch_dir / "hooks",
            timeout_s=hook_timeout_s,
            emit=emit,
            on_withheld=on_withheld or (lambda _name: None),
            checkout=checkout,
        )
    )
    # After the hooks: the sandbox holds what bash sources (`tool_env`) too.
    layers.append(
        SandboxMiddleware(
            runtime,
            workspace_id=record.id,
            scratch_dir=scratch_dir,
            emit=emit,
            choice=safety,
            warned=sandbox_warned,
        )
    )
    layers.append(MaskingMiddleware(masker))
    return layers
