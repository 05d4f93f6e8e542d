"""The external agent's process and the ACP connection to it (xum is the client).

The process is started in the checkout's directory, in a process group of its own, so that
closing the workspace (or a cancel the agent ignores) stops it and every command it left
running. Its stdout is read here line by line before the SDK sees it: a line that is not a
JSON-RPC object breaks the protocol, and the turn ends saying so (the SDK alone would skip it and
wait forever for an answer that never comes). Its stderr is kept (the last few kilobytes) for the
error that says why it ended.

Requests that set up the session (`initialize`, `session/new`, `session/load`) must be answered
within `START_TIMEOUT_S`; a prompt may take as long as the agent works, but ends at once when the
process exits or breaks the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from xum.core.errors import XumError
from xum.workspaces.external.definitions import DOCS, ExternalAgentDefinition

if TYPE_CHECKING:
    from acp.core import ClientSideConnection
    from acp.interfaces import Client
    from acp.schema import InitializeResponse, PromptResponse

START_TIMEOUT_S = 60.0  # initialize, session/new, session/load
STDERR_TAIL = 4000  # bytes of the agent's stderr kept for error messages
LINE_LIMIT = 50 * 1024 * 1024  # one JSON-RPC line (the SDK's own default)

T = TypeVar("T")


class ExternalAgentError(XumError):
    code = "external_agent_error"


def resolve_command(definition: ExternalAgentDefinition, env: Mapping[str, str]) -> str:
    """The program to start: an absolute path as given, else looked up on the agent's PATH."""
    command = definition.command
    if os.path.isabs(command):
        if not os.access(command, os.X_OK):
            raise _missing(definition)
        return command
    found = shutil.which(command, path=env.get("PATH"))
    if found is None:
        raise _missing(definition)
    return found


def _missing(definition: ExternalAgentDefinition) -> ExternalAgentError:
    return ExternalAgentError(
        f'the external agent "{definition.name}" cannot start: its command '
        f"{definition.command!r} was not found (or is not executable)",
        hint=f'install it, or fix "command" under externalAgents.{definition.name} in '
        f"config.json ({DOCS})",
    )


@dataclass(frozen=True)
class Launch:
    """How the agent's process is started when it is not the plain program: the command line
    (`bwrap ... -- program`, or the ssh client that starts it on a host), where and with what
    environment the local process starts, and bytes written to its stdin before the protocol
    (the remote launcher's payload)."""

    argv: Sequence[str]
    cwd: str | None
    env: Mapping[str, str]
    preamble: bytes = b""


class AgentProcess:
    """One running agent and its connection. `cwd`: the checkout, as the agent sees it (sent
    in `session/new`)."""

    def __init__(
        self,
        definition: ExternalAgentDefinition,
        *,
        cwd: str,
        env: Mapping[str, str],
        client: Client,
    ) -> None:
        self.definition = definition
        self.cwd = cwd
        self.env = dict(env)
        self.client = client
        self.process: asyncio.subprocess.Process | None = None
        self.conn: ClientSideConnection | None = None
        self._reader = asyncio.StreamReader(limit=LINE_LIMIT)
        self._stderr = bytearray()
        self._tasks: list[asyncio.Task[None]] = []
        # Set (with the reason) once the agent can no longer answer: it exited or broke the
        # protocol. Every request waiting on it ends with that reason.
        self.broken: asyncio.Future[ExternalAgentError] | None = None

    @property
    def name(self) -> str:
        return self.definition.display

    @property
    def alive(self) -> bool:
        return (
            self.process is not None
            and self.process.returncode is None
            and self.broken is not None
            and not self.broken.done()
        )

    async def start(self, launch: Launch | None = None) -> None:
        """Start the program in the checkout (`launch`: another way to start it)."""
        from acp import connect_to_agent

        if launch is None:
            program = resolve_command(self.definition, self.env)
            launch = Launch([program, *self.definition.args], self.cwd, self.env)
        loop = asyncio.get_running_loop()
        self.broken = loop.create_future()
        try:
            self.process = await asyncio.create_subprocess_exec(
                *launch.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=launch.cwd,
                env=dict(launch.env),
                start_new_session=True,  # its own group: kill() stops what it started too
                limit=LINE_LIMIT,
            )
        except OSError as exc:
            raise ExternalAgentError(
                f'the external agent "{self.name}" could not start: {exc}',
                hint=f"check its command under externalAgents.{self.definition.name} ({DOCS})",
            ) from None
        self._tasks = [
            asyncio.create_task(self._pump_stdout(), name=f"acp stdout {self.name}"),
            asyncio.create_task(self._pump_stderr(), name=f"acp stderr {self.name}"),
            asyncio.create_task(self._watch_exit(), name=f"acp exit {self.name}"),
        ]
        assert self.process.stdin is not None
        if launch.preamble:
            self.process.stdin.write(launch.preamble)  # before any message: it is read first
        self.conn = connect_to_agent(self.client, self.process.stdin, self._reader)

    # Reading the agent ------------------------------------------------------------------------

    async def _pump_stdout(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        stdout = self.process.stdout
        try:
            while True:
                line = await stdout.readline()
                if not line:
                    break
                if line.strip() and not _is_message(line):
                    shown = line[:200].decode("utf-8", "replace").strip()
                    self._break(
                        f'the external agent "{self.name}" broke the protocol: a line on its '
                        f"output is not a JSON-RPC message ({shown!r})"
                    )
                    break
                self._reader.feed_data(line)
        except (ValueError, asyncio.LimitOverrunError):
            self._break(f'the external agent "{self.name}" sent a line longer than xum accepts')
        finally:
            self._reader.feed_eof()

    async def _pump_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        while chunk := await self.process.stderr.read(4096):
            self._stderr += chunk
            del self._stderr[:-STDERR_TAIL]

    async def _watch_exit(self) -> None:
        assert self.process is not None
        code = await self.process.wait()
        # Give the stderr reader a moment to take what the process said before it ended.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*self._tasks[:2]), 2.0)
        said = self.stderr_tail()
        self._break(
            f'the external agent "{self.name}" exited (status {code})'
            + (f"; it said: {said}" if said else "")
        )

    def _refusal(self, exc: Exception) -> str:
        """The agent's error answer in words: its message, its details when it sent any, else
        the last line it wrote to stderr (where an "Internal error" usually says what broke)."""
        said = str(exc)
        data = getattr(exc, "data", None)
        if data:
            detail = data if isinstance(data, str) else orjson.dumps(data).decode()
            return f"{said} ({detail[:500]})"
        last = self.stderr_tail().splitlines()[-1:] if self.stderr_tail() else []
        return f"{said} (its last output: {last[0][:500]})" if last else said

    def stderr_tail(self) -> str:
        return self._stderr.decode("utf-8", "replace").strip()[-1000:]

    def _break(self, message: str) -> None:
        if self.broken is not None and not self.broken.done():
            self.broken.set_result(
                ExternalAgentError(
                    message, hint=f"see {DOCS}; the next message starts the agent again"
                )
            )

    # Requests ---------------------------------------------------------------------------------

    async def call(self, what: str, request: Awaitable[T], timeout_s: float | None = None) -> T:
        """`request`'s answer, or ExternalAgentError when the agent breaks, exits, refuses or
        (with `timeout_s`) does not answer in time."""
        from acp import RequestError

        assert self.broken is not None
        task = asyncio.ensure_future(request)
        waiting: set[asyncio.Future[Any]] = {task, self.broken}
        try:
            done, _ = await asyncio.wait(
                waiting, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            task.cancel()
            raise
        if task in done:
            try:
                return task.result()
            except RequestError as exc:
                raise ExternalAgentError(
                    f'the external agent "{self.name}" refused {what}: {self._refusal(exc)}',
                    hint=f"see {DOCS}",
                ) from None
            except ConnectionError:
                # The connection closed under the request: the process ended or broke the
                # protocol; its reason comes a moment later.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self.broken), 5.0)
                if self.broken.done():
                    raise self.broken.result() from None
                raise ExternalAgentError(
                    f'the external agent "{self.name}" closed the connection during {what}'
                ) from None
        task.cancel()
        if self.broken.done():
            raise self.broken.result()
        raise ExternalAgentError(
            f'the external agent "{self.name}" did not answer {what} within {timeout_s:.0f} s',
            hint=f"check that {self.definition.command!r} speaks ACP on stdin/stdout "
            f"(its arguments may need e.g. 'acp'; {DOCS})",
        )

    async def initialize(self) -> InitializeResponse:
        from acp import PROTOCOL_VERSION
        from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

        from xum import __version__

        assert self.conn is not None
        return await self.call(
            "initialize",
            self.conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                    terminal=True,
                ),
                client_info=Implementation(name="xum", title="xum", version=__version__),
            ),
            START_TIMEOUT_S,
        )

    async def new_session(self) -> str:
        assert self.conn is not None
        answer = await self.call(
            "session/new", self.conn.new_session(cwd=self.cwd, mcp_servers=[]), START_TIMEOUT_S
        )
        return answer.session_id

    async def load_session(self, session_id: str) -> None:
        assert self.conn is not None
        await self.call(
            "session/load",
            self.conn.load_session(cwd=self.cwd, session_id=session_id, mcp_servers=[]),
            START_TIMEOUT_S,
        )

    async def prompt(self, session_id: str, text: str) -> PromptResponse:
        from acp import text_block

        assert self.conn is not None
        return await self.call(
            "the prompt", self.conn.prompt(session_id=session_id, prompt=[text_block(text)])
        )

    async def cancel(self, session_id: str) -> None:
        if self.conn is None or not self.alive:
            return
        with contextlib.suppress(Exception):
            await self.conn.cancel(session_id=session_id)

    # Stopping ---------------------------------------------------------------------------------

    async def kill(self) -> None:
        """Stop the agent and everything in its process group, then the connection."""
        process = self.process
        if process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(process.wait(), 10.0)
            await _group_gone(process.pid)
        if self.conn is not None:
            with contextlib.suppress(Exception):
                await self.conn.close()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(BaseException):
                await task
        if process is not None and process.stdin is not None:
            with contextlib.suppress(Exception):
                process.stdin.close()


async def _group_gone(group: int, timeout_s: float = 5.0) -> None:
    """Wait (bounded) until nothing of the process group is left. In the sandbox the agent is
    not bwrap's direct child: the processes inside its PID namespace die with bwrap, but they
    are reaped a moment after bwrap itself."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while loop.time() < deadline:
        try:
            os.killpg(group, 0)
        except (ProcessLookupError, PermissionError):
            return
        await asyncio.sleep(0.02)


def _is_message(line: bytes) -> bool:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return isinstance(value, dict)
