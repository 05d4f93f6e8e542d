"""The client side of ACP that xum serves to an external agent.

* `session/update`: handed to the running turn's recording (`recording.TurnRecording`).
* `session/request_permission`: xum's approvals. The workspace's permission mode decides first
  (`auto`: allowed; `read-only`: anything but reading and searching is rejected); in `ask` a
  person answers through the front-end's approver (the browser's card, the inbox), with the
  same `approval-request` / `approval-resolved` events as xum's own calls; without a person the
  approval policy answers (`never`: allowed, `deny`: rejected). The option picked is the one
  whose kind matches the decision (allow_once, allow_always, reject_once).
* `fs/read_text_file`, `fs/write_text_file`: through xum's path fence and write fence
  (`xum.tools.paths`) and confined to the checkout (and the session's scratch dir); the
  read-only mode refuses every write.
* `terminal/*`: commands run in the workspace's runtime inside the session's sandbox, exactly
  as xum's bash tool runs them (the sandbox middleware hands the call its sandboxed runtime),
  their output bounded by the request's `outputByteLimit` (the oldest bytes go first).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson
from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    CreateTerminalResponse,
    DeniedOutcome,
    EnvVariable,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from xum.core.pathtext import is_within
from xum.engine import events as E
from xum.engine.events import EventSink
from xum.engine.extensions import ToolCall
from xum.runtime.base import ExecResult, Runtime
from xum.workspaces.safety.approvals import ApprovalAnswer, Approver, Decision
from xum.workspaces.safety.choice import SafetyChoice, permission_mode

if TYPE_CHECKING:
    from xum.tools.base import ToolContext
    from xum.workspaces.external.recording import TurnRecording
    from xum.workspaces.safety.sandboxing import SandboxMiddleware

READ_KINDS = frozenset({"read", "search", "think", "fetch"})
DEFAULT_OUTPUT_LIMIT = 1024 * 1024  # a terminal's kept output when the agent sets no limit
# Released terminals whose output is still kept for the tool call that showed them (an agent
# may release a terminal before it reports the call done: Claude Code does).
KEPT_RELEASED = 16
MAX_READ_BYTES = 16 * 1024 * 1024
_OPTION_KINDS: dict[Decision, tuple[str, ...]] = {
    "once": ("allow_once", "allow_always"),
    "always": ("allow_always", "allow_once"),
    "deny": ("reject_once", "reject_always"),
}


@dataclass(frozen=True)
class ClientPlace:
    """The workspace the agent works in, as the client side needs it."""

    workspace_id: str
    workspace_name: str
    project_path: str
    project_root: str  # the trust root (where "always" rules would be kept)
    scratch_dir: str
    env: dict[str, str]  # what every command gets over the runtime's environment
    # Hides xum's own and the project's secrets in what commands print (the session's masker).
    mask: Callable[[str], str] = str


@dataclass
class _Terminal:
    limit: int
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    task: asyncio.Task[ExecResult] | None = None

    def take(self, chunk: bytes) -> None:
        self.output += chunk
        if len(self.output) > self.limit:
            del self.output[: len(self.output) - self.limit]
            self.truncated = True

    def text(self) -> str:
        # Cut at a character boundary: the oldest bytes went first, maybe mid-character.
        return self.output.decode("utf-8", "replace").lstrip("\ufffd")


class XumClient:
    """What an external agent may ask of xum while it works in a workspace."""

    def __init__(
        self,
        place: ClientPlace,
        runtime: Runtime,
        *,
        safety: SafetyChoice,
        approver: Approver | None,
        emit: EventSink,
        sandbox: SandboxMiddleware | None,
    ) -> None:
        self.place = place
        self.runtime = runtime
        self.safety = safety
        self.approver = approver
        self.emit = emit
        self.sandbox = sandbox
        self.recording: TurnRecording | None = None  # the running prompt's, if any
        self.agent_name = "agent"  # the definition's name (its remembered rules are per agent)
        self.terminals: dict[str, _Terminal] = {}
        self.released: dict[str, str] = {}  # terminal id -> its final output (the latest few)

    # Updates and permissions ----------------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        recording = self.recording
        if recording is not None:
            await recording.update(update)

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        decision = await self._decide(tool_call)
        for kind in _OPTION_KINDS[decision]:
            for option in options:
                if option.kind == kind:
                    return RequestPermissionResponse(
                        outcome=AllowedOutcome(option_id=option.option_id, outcome="selected")
                    )
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    async def _decide(self, tool_call: ToolCallUpdate) -> Decision:
        from xum.workspaces.external import rules

        mode = permission_mode(self.safety, self.place.workspace_id)
        kind = str(tool_call.kind or "other")
        if mode == "read-only":
            return "once" if kind in READ_KINDS else "deny"
        if mode == "auto":
            return "once"
        rule = rules.rule_for(
            self.agent_name,
            kind,
            tool_call.raw_input,
            project=self.place.project_root,
            workspace=self.runtime.workspace_path,
        )
        if rule.covered:
            return "once"  # the user chose "always" for this earlier (as for xum's own calls)
        policy = self.safety.approval or ("ask" if self.approver is not None else "deny")
        title = str(tool_call.title or kind)
        subject = title
        if tool_call.raw_input is not None:
            subject = orjson.dumps(tool_call.raw_input).decode()[:4000]
        request = E.ApprovalRequest(
            request_id=os.urandom(6).hex(),
            call_id=str(tool_call.tool_call_id),
            tool=title,
            kind="write" if kind in ("edit", "delete", "move") else "command",
            subject=subject,
            why=f"the external agent asks to run {title!r} ({kind})",
            prefix=rule.prefix,
        )
        self.emit(request)
        if policy == "ask" and self.approver is not None:
            try:
                answer, by = await self.approver(request), "user"
            except BaseException:
                self.emit(_resolved(request, ApprovalAnswer("deny"), "interrupted"))
                raise
        else:
            answer, by = ApprovalAnswer("once" if policy == "never" else "deny"), "policy"
        self.emit(_resolved(request, answer, by))
        if answer.decision == "always" and rule.prefix is not None:
            # xum keeps the rule and answers later requests itself; the agent is allowed this
            # once, so that forgetting the rule in Settings takes effect for it too.
            await asyncio.to_thread(rules.remember, self.place.project_root, rule)
            return "once"
        return answer.decision if answer.decision in _OPTION_KINDS else "deny"

    # Files ----------------------------------------------------------------------------------

    def tool_context(self, call_id: str) -> ToolContext:
        """The context a tool call of this workspace would have (the sandbox's input)."""
        return self._context(call_id)

    def _context(self, call_id: str) -> ToolContext:
        from xum.tools.base import ToolContext

        return ToolContext(
            call_id=call_id,
            runtime=self.runtime,
            workspace_id=self.place.workspace_id,
            workspace_name=self.place.workspace_name,
            project_path=self.place.project_path,
            scratch_dir=self.place.scratch_dir,
            env=self.place.env,
        )

    async def _inside(self, canonical: str, path: str) -> None:
        """Refuse a file outside the checkout and the session's scratch dir (the temp dir
        xum's own file tools may also use is not the agent's: its files stay in the checkout)."""
        # On a remote host the session's scratch dir is the runtime's own there.
        scratch = self.place.scratch_dir
        if not self.runtime.sees_local_files:
            scratch = str(getattr(self.runtime, "scratch_dir", "") or scratch)
        roots = [
            await self.runtime.realpath(self.runtime.workspace_path),
            await self.runtime.realpath(scratch),
        ]
        if not any(is_within(canonical, root) for root in roots):
            raise _refused(f"{path} is outside the workspace {self.runtime.workspace_path}")

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        from xum.tools.paths import PathRefused, resolve_read_path

        try:
            canonical = await resolve_read_path(self._context("acp-read"), path)
        except PathRefused as exc:
            raise _refused(str(exc)) from None
        await self._inside(canonical, path)
        try:
            data = await self.runtime.read_bytes(canonical, limit=MAX_READ_BYTES)
        except OSError as exc:
            raise _refused(f"{path} cannot be read: {exc.strerror or exc}") from None
        text = data.decode("utf-8", "replace")
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start : start + limit if limit is not None else None])
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse | None:
        from xum.tools.paths import PathRefused, resolve_write_path

        if permission_mode(self.safety, self.place.workspace_id) == "read-only":
            raise _refused(f"{path} was not written: the workspace is in the read-only mode")
        try:
            target = await resolve_write_path(self._context("acp-write"), path)
        except PathRefused as exc:
            raise _refused(str(exc)) from None
        await self._inside(target.path, path)
        try:
            await self.runtime.write_bytes_atomic(target.path, content.encode())
        except OSError as exc:
            raise _refused(f"{path} cannot be written: {exc.strerror or exc}") from None
        return WriteTextFileResponse()

    # Terminals ------------------------------------------------------------------------------

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        terminal_id = f"term-{os.urandom(4).hex()}"
        script = shlex.join([command, *args]) if args else command
        runtime = await self._command_runtime(terminal_id, script)
        where = self.runtime.resolve(cwd) if cwd else None
        if where is not None:
            await self._inside(await self.runtime.realpath(where), where)
        extra = {**self.place.env, **{v.name: v.value for v in env or []}}
        terminal = _Terminal(limit=output_byte_limit or DEFAULT_OUTPUT_LIMIT)
        terminal.task = asyncio.create_task(
            runtime.exec(script, env=extra, cwd=where, on_output=terminal.take),
            name=f"acp terminal {terminal_id}",
        )
        self.terminals[terminal_id] = terminal
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def _command_runtime(self, call_id: str, script: str) -> Runtime:
        """The runtime a command runs in: the sandboxed one the sandbox layer hands xum's bash
        for the same command, or the workspace's where the sandbox is off."""
        if self.sandbox is None:
            return self.runtime
        from xum.tools.base import ToolResult

        call = ToolCall(call_id, "bash", orjson.dumps({"command": script}).decode())
        answer = await self.sandbox.before_tool(call, self._context(call_id))
        if isinstance(answer, ToolResult):
            raise _refused(answer.output)
        return answer.runtime if answer is not None else self.runtime

    def _terminal(self, terminal_id: str) -> _Terminal:
        terminal = self.terminals.get(terminal_id)
        if terminal is None:
            raise RequestError.invalid_params({"message": f"no terminal {terminal_id}"})
        return terminal

    def terminal_text(self, terminal_id: str) -> str | None:
        terminal = self.terminals.get(terminal_id)
        if terminal is None:
            return self.released.get(terminal_id)
        return self.place.mask(terminal.text())

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        terminal = self._terminal(terminal_id)
        status = None
        if terminal.task is not None and terminal.task.done():
            status = _exit_status(terminal.task)
        return TerminalOutputResponse(
            output=self.place.mask(terminal.text()),
            truncated=terminal.truncated,
            exit_status=status,
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        terminal = self._terminal(terminal_id)
        assert terminal.task is not None
        with contextlib.suppress(BaseException):
            await asyncio.shield(terminal.task)
        status = _exit_status(terminal.task)
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse | None:
        await _stop(self._terminal(terminal_id))
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse | None:
        terminal = self.terminals.pop(terminal_id, None)
        if terminal is not None:
            await _stop(terminal)
            self.released[terminal_id] = self.place.mask(terminal.text())
            while len(self.released) > KEPT_RELEASED:
                del self.released[next(iter(self.released))]
        return ReleaseTerminalResponse()

    async def close(self) -> None:
        """Stop every command the agent left running."""
        for terminal_id in list(self.terminals):
            await _stop(self.terminals.pop(terminal_id))

    # What xum does not offer ----------------------------------------------------------------

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("elicitation/create")

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        return None

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        return None


def _refused(message: str) -> RequestError:
    return RequestError(-32000, f"refused by xum: {message}")


def _resolved(request: E.ApprovalRequest, answer: ApprovalAnswer, by: str) -> E.ApprovalResolved:
    return E.ApprovalResolved(
        request_id=request.request_id,
        call_id=request.call_id,
        decision=answer.decision,
        by=by,
        reason=answer.reason,
    )


def _exit_status(task: asyncio.Task[ExecResult]) -> TerminalExitStatus:
    if task.cancelled() or task.exception() is not None:
        return TerminalExitStatus(exit_code=None, signal="SIGKILL")
    result = task.result()
    signal_name = None
    if result.signal is not None:
        import signal

        with contextlib.suppress(ValueError):
            signal_name = signal.Signals(result.signal).name
    return TerminalExitStatus(exit_code=result.exit_code, signal=signal_name)


async def _stop(terminal: _Terminal) -> None:
    task = terminal.task
    if task is not None and not task.done():
        task.cancel()  # the runtime kills the command's process group
        with contextlib.suppress(BaseException):
            await task
