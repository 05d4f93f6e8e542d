"""A scripted ACP agent for tests of external agents: `python -m xum.testing.fake_acp_agent`.

It is the SDK's agent side (`acp.run_agent`) doing what a JSON script says. The script's path is
in the environment variable `XUM_FAKE_ACP_SCRIPT`::

    {
      "loadSession": true,            # advertise session/load (default false; "fail": advertise
                                      # it, but answer every load with an error)
      "initialize": "hang",           # or "crash": never answer initialize / exit 3 at it
      "envDump": "/tmp/env.json",     # write this process's environment there at start
      "callLog": "/tmp/calls.ndjson", # append {"method", "sessionId", "cwd"} per request
      "stayAfterEof": true,           # do not exit when stdin ends (as some real agents)
      "prompts": [[step, ...], ...]   # the steps of the 1st, 2nd, ... prompt (the last repeats)
    }

A step is an object with one key:

* `{"message": "text"}`, `{"thought": "text"}`: a message or thought chunk;
* `{"toolCall": {"id", "title", "kind", "rawInput"}}`: a tool call starts (pending);
* `{"toolUpdate": {"id", "status", "text", "diff": {"path", "old", "new"}, "rawOutput", "title",
  "kind"}}` (an update of a call never started announces it, as Gemini CLI does);
* `{"plan": [{"content", "status"}, ...]}`;
* `{"permission": {"id", "title", "kind", "rawInput"}}`: asks permission (allow once, allow always, reject
  once) and says what was chosen as a message chunk (`permission: <option id>` or
  `permission: cancelled`);
* `{"read": "path"}`, `{"write": {"path", "content"}}`: through the client's fs methods, then a
  message chunk with the content, `wrote <path>` or `refused: <why>`;
* `{"ownWrite": {"path", "content"}}`, `{"ownRead": "path"}`, `{"ownList": "dir"}`: the agent's
  own file access, not through the client (what the sandbox it runs in allows), then a message
  chunk `own-wrote <path>`, the content, the names (sorted, comma-separated), or
  `own-refused: <error>`, and a newline;
* `{"terminal": {"command", "args", "id"}}`: runs it through the client's terminal, then a tool
  call `id` (kind execute) whose content is the terminal, completed once it exits, and a message
  chunk `exit <code>: <output>`;
* `{"detach": ["sleep", "300"]}`: starts that command itself in a new session and leaves it
  running (as Codex leaves its commands), then a message chunk `detached`;
* `{"usage": {"cost": 0.25}}`: a usage update with that cumulative cost in USD;
* `{"waitCancel": true}`: wait until the client cancels (then the prompt ends `cancelled`);
* `{"ignoreCancel": true}`: never end the prompt, cancelled or not;
* `{"crash": 3}`: exit with that status at once;
* `{"malformed": true}`: write a line that is not JSON on stdout;
* `{"stop": "end_turn"}`: the prompt's stopReason (default end_turn; the last step).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    RequestError,
    run_agent,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
)
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    Cost,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PlanEntry,
    PromptResponse,
    ToolCallUpdate,
    UsageUpdate,
)

SCRIPT_ENV = "XUM_FAKE_ACP_SCRIPT"


class FakeAgent:
    def __init__(self, script: dict[str, Any]) -> None:
        self.script = script
        self.conn: Client | None = None
        self.prompts = 0
        self.sessions = 0
        self.cancelled: asyncio.Event = asyncio.Event()

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    def _log(self, method: str, **fields: Any) -> None:
        path = self.script.get("callLog")
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"method": method, **fields}) + "\n")

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        self._log("initialize", capabilities=_dump(kwargs.get("client_capabilities")))
        mode = self.script.get("initialize")
        if mode == "hang":
            await asyncio.Event().wait()
        if mode == "crash":
            os._exit(3)
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(load_session=bool(self.script.get("loadSession"))),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        self.sessions += 1
        session_id = f"fake-session-{os.getpid()}-{self.sessions}"
        self._log("session/new", sessionId=session_id, cwd=cwd)
        return NewSessionResponse(session_id=session_id)

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse:
        self._log("session/load", sessionId=session_id, cwd=cwd)
        assert self.conn is not None
        if self.script.get("loadSession") == "fail":
            raise RequestError.internal_error({"details": f"Session not found: {session_id}"})
        # An agent replays its history on load: the client must not record it again.
        await self.conn.session_update(session_id, update_agent_message_text("(replayed)"))
        return LoadSessionResponse()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self._log("session/cancel", sessionId=session_id)
        self.cancelled.set()

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        text = "".join(getattr(b, "text", "") for b in prompt)
        self._log("session/prompt", sessionId=session_id, text=text)
        self.cancelled.clear()
        scripted = self.script.get("prompts") or [[{"message": "ok"}]]
        steps = scripted[min(self.prompts, len(scripted) - 1)]
        self.prompts += 1
        stop = "end_turn"
        for step in steps:
            result = await self._step(session_id, step)
            if result is not None:
                stop = result
                break
        return PromptResponse(stop_reason=stop)  # type: ignore[arg-type]

    async def _say(self, session_id: str, text: str) -> None:
        assert self.conn is not None
        await self.conn.session_update(session_id, update_agent_message_text(text))

    async def _step(self, sid: str, step: dict[str, Any]) -> str | None:
        conn = self.conn
        assert conn is not None
        if "message" in step:
            await self._say(sid, step["message"])
        elif "thought" in step:
            await conn.session_update(sid, update_agent_thought_text(step["thought"]))
        elif "toolCall" in step:
            call = step["toolCall"]
            await conn.session_update(
                sid,
                start_tool_call(
                    call["id"],
                    call.get("title", call["id"]),
                    kind=call.get("kind", "other"),
                    status="pending",
                    raw_input=call.get("rawInput"),
                ),
            )
        elif "toolUpdate" in step:
            await conn.session_update(sid, _tool_update(step["toolUpdate"]))
        elif "plan" in step:
            entries = [PlanEntry(priority="medium", **e) for e in step["plan"]]
            await conn.session_update(sid, update_plan(entries))
        elif "permission" in step:
            ask = step["permission"]
            options = [
                PermissionOption(option_id="allow-once", name="Allow", kind="allow_once"),
                PermissionOption(option_id="allow-always", name="Always", kind="allow_always"),
                PermissionOption(option_id="reject-once", name="Reject", kind="reject_once"),
            ]
            answer = await conn.request_permission(
                session_id=sid,
                tool_call=ToolCallUpdate(
                    tool_call_id=ask["id"],
                    title=ask.get("title"),
                    kind=ask.get("kind"),
                    raw_input=ask.get("rawInput"),
                ),
                options=options,
            )
            outcome = answer.outcome
            chosen = getattr(outcome, "option_id", None) or "cancelled"
            await self._say(sid, f"permission: {chosen}")
        elif "read" in step:
            try:
                read = await conn.read_text_file(session_id=sid, path=step["read"])
                await self._say(sid, read.content)
            except Exception as exc:
                await self._say(sid, f"refused: {exc}")
        elif "write" in step:
            target = step["write"]
            try:
                await conn.write_text_file(
                    session_id=sid, path=target["path"], content=target["content"]
                )
                await self._say(sid, f"wrote {target['path']}")
            except Exception as exc:
                await self._say(sid, f"refused: {exc}")
        elif "terminal" in step:
            await self._terminal(sid, step["terminal"])
        elif "detach" in step:
            # A command the agent runs itself in a session of its own, as Codex runs its
            # commands, and leaves running.
            await asyncio.create_subprocess_exec(*step["detach"], start_new_session=True)
            await self._say(sid, "detached")
        elif "ownWrite" in step or "ownRead" in step or "ownList" in step:
            await self._say(sid, _own_access(step) + "\n")
        elif "usage" in step:
            cost = Cost(amount=float(step["usage"]["cost"]), currency="USD")
            await conn.session_update(
                sid, UsageUpdate(session_update="usage_update", used=10, size=1000, cost=cost)
            )
        elif "waitCancel" in step:
            await self.cancelled.wait()
            return "cancelled"
        elif "ignoreCancel" in step:
            await asyncio.Event().wait()
        elif "crash" in step:
            sys.stdout.flush()
            os._exit(int(step["crash"]))
        elif "malformed" in step:
            os.write(1, b"this is not json\n")
        elif "stop" in step:
            return str(step["stop"])
        return None

    async def _terminal(self, sid: str, spec: dict[str, Any]) -> None:
        conn = self.conn
        assert conn is not None
        call_id = spec.get("id", "term-call")
        try:
            made = await conn.create_terminal(
                session_id=sid, command=spec["command"], args=spec.get("args")
            )
        except Exception as exc:
            await self._say(sid, f"refused: {exc}")
            return
        await conn.session_update(
            sid,
            start_tool_call(
                call_id,
                spec.get("title", spec["command"]),
                kind="execute",
                status="in_progress",
                content=[tool_terminal_ref(made.terminal_id)],
                raw_input={"command": spec["command"], "args": spec.get("args")},
            ),
        )
        exited = await conn.wait_for_terminal_exit(session_id=sid, terminal_id=made.terminal_id)
        output = await conn.terminal_output(session_id=sid, terminal_id=made.terminal_id)
        await conn.session_update(sid, update_tool_call(call_id, status="completed"))
        await self._say(sid, f"exit {exited.exit_code}: {output.output}")
        await conn.release_terminal(session_id=sid, terminal_id=made.terminal_id)


def _own_access(step: dict[str, Any]) -> str:
    try:
        if "ownWrite" in step:
            target = step["ownWrite"]
            Path(target["path"]).write_text(target["content"], encoding="utf-8")
            return f"own-wrote {target['path']}"
        if "ownRead" in step:
            return Path(step["ownRead"]).read_text(encoding="utf-8")
        return ",".join(sorted(os.listdir(step["ownList"])))
    except OSError as exc:
        return f"own-refused: {exc}"


def _tool_update(spec: dict[str, Any]) -> Any:
    content: list[Any] = []
    if "text" in spec:
        content.append(tool_content(text_block(spec["text"])))
    if "diff" in spec:
        diff = spec["diff"]
        content.append(tool_diff_content(diff["path"], diff["new"], diff.get("old")))
    return update_tool_call(
        spec["id"],
        title=spec.get("title"),
        kind=spec.get("kind"),
        status=spec.get("status", "completed"),
        content=content or None,
        raw_output=spec.get("rawOutput"),
    )


def _dump(value: Any) -> Any:
    return value.model_dump(by_alias=True, exclude_none=True) if value is not None else None


def main() -> None:
    script = json.loads(Path(os.environ[SCRIPT_ENV]).read_text(encoding="utf-8"))
    dump = script.get("envDump")
    if dump:
        Path(dump).write_text(json.dumps(dict(os.environ)), encoding="utf-8")
    asyncio.run(run_agent(FakeAgent(script)))  # type: ignore[arg-type]
    if script.get("stayAfterEof"):
        import time

        time.sleep(3600)  # whoever started it has to stop it


if __name__ == "__main__":
    main()
