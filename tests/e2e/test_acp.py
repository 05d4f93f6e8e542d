"""`xum acp` end to end: the real CLI in a subprocess, driven over stdio by the ACP SDK's client
side (`xum.testing.acpeditor.TestEditor`), against the fake LLM server and real git
repositories. Every wait is on a received message, a file the test made, or a bounded poll."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.e2e.cli import XUM
from tests.processes import alive
from tests.support.acp import bridge, env_for, tool_results
from xum.store.config import update_config
from xum.testing import fakellm
from xum.testing.acpeditor import EditorCapabilities, Received, TestEditor
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(120)


def is_call_update(call_name: str, status: str) -> Callable[[Received], bool]:
    def match(item: Received) -> bool:
        u = item.update
        return (
            item.kind in ("tool_call", "tool_call_update")
            and getattr(u, "status", None) == status
            and call_name in (u.title or "")
        )

    return match


async def test_initialize_advertises_what_is_implemented(fake_llm: FakeLLM, repo: Path) -> None:
    async with bridge(TestEditor(), repo, env_for(fake_llm)) as (_conn, _proc, init):
        caps = init.agent_capabilities
        assert init.protocol_version == 1
        assert init.agent_info.name == "xum"
        assert caps.load_session is True
        assert caps.session_capabilities.list is not None
        assert caps.prompt_capabilities.embedded_context is True
        assert caps.prompt_capabilities.image and not caps.prompt_capabilities.audio
        assert not caps.mcp_capabilities.http and not caps.mcp_capabilities.sse
        assert caps.session_capabilities.fork is None and caps.session_capabilities.resume is None
        assert init.auth_methods == []


async def test_prompt_streams_thoughts_text_and_a_tool_call(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.script(
        fakellm.reply(
            fakellm.Reasoning("Looking at the file first."),
            "Reading it.",
            fakellm.ToolCall("file_read", {"path": "app.py"}),
        ),
        fakellm.text("greet() returns hi."),
    )
    skill = repo / ".xum/skills/deploy/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: deploy\ndescription: ship it\n---\nDeploy $ARGUMENTS.\n")
    editor = TestEditor()
    async with bridge(editor, repo, env_for(fake_llm)) as (conn, _proc, _init):
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        assert new.modes.current_mode_id == "exec"
        assert {m.id for m in new.modes.available_modes} == {"exec", "plan"}
        options = {o.id: o for o in new.config_options}
        assert options["model"].current_value == "anthropic:claude-opus-5-5"
        assert options["model"].category == "model"
        assert options["thinking"].current_value == "medium"
        # The session's slash commands arrive once the session exists.
        commands = await editor.wait_for(lambda r: r.kind == "available_commands_update")
        names = {c.name for c in commands.update.available_commands}
        assert {"model", "deploy", "sonnet"} <= names and "fork" not in names
        deploy = next(c for c in commands.update.available_commands if c.name == "deploy")
        assert deploy.description == "ship it"

        answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("What is greet?")])
        assert answer.stop_reason == "end_turn"

    assert editor.thought_text() == "Looking at the file first."
    assert editor.message_text() == "Reading it.greet() returns hi."
    calls = editor.of_kind("tool_call")
    assert len(calls) == 1 and calls[0].kind == "read" and calls[0].status == "pending"
    call_id = calls[0].tool_call_id
    updates = [u for u in editor.of_kind("tool_call_update") if u.tool_call_id == call_id]
    running, done = updates[0], updates[-1]
    assert running.status == "in_progress" and running.title == "Read app.py"
    assert running.locations[0].path == str(repo / "app.py")
    assert running.raw_input == {"path": "app.py"}
    assert done.status == "completed"
    assert "return 'hi'" in done.content[0].content.text
    # The order an editor renders: thought, text, the call, its result, the final text.
    kinds = [r.kind for r in editor.received if r.session_id == new.session_id]
    first = kinds.index("agent_thought_chunk")
    assert kinds.index("tool_call") > kinds.index("agent_message_chunk") > first
    assert kinds[-1] == "agent_message_chunk"
    title = editor.of_kind("session_info_update")
    assert title and title[0].title == "What is greet?"


async def test_file_edit_is_a_diff_and_todo_write_is_the_plan(
    fake_llm: FakeLLM, repo: Path
) -> None:
    fake_llm.script(
        fakellm.tool_call(
            "todo_write",
            {
                "todos": [
                    {"content": "Change the greeting", "status": "in_progress"},
                    {"content": "Run the tests", "status": "pending"},
                ]
            },
        ),
        fakellm.tool_call(
            "file_edit_replace_string",
            {"path": "app.py", "old_string": "'hi'", "new_string": "'hello'"},
        ),
        fakellm.text("Done."),
    )
    editor = TestEditor()
    async with bridge(editor, repo, env_for(fake_llm)) as (conn, _proc, _init):
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("Say hello")])
        assert answer.stop_reason == "end_turn"

    plans = editor.of_kind("plan")
    assert [(e.content, e.status) for e in plans[-1].entries] == [
        ("Change the greeting", "in_progress"),
        ("Run the tests", "pending"),
    ]
    edit = [u for u in editor.of_kind("tool_call_update") if u.status == "completed"][-1]
    diff = edit.content[0]
    assert diff.type == "diff" and diff.path == str(repo / "app.py")
    assert "return 'hi'" in diff.old_text and "return 'hello'" in diff.new_text
    assert edit.locations[0].line == 1
    assert (repo / "app.py").read_text() == "def greet():\n    return 'hello'\n"


@pytest.mark.parametrize("delegated", [False, True], ids=["local", "editor-terminal"])
async def test_cancel_stops_the_running_command_and_the_session_goes_on(
    fake_llm: FakeLLM, repo: Path, delegated: bool
) -> None:
    # The command may run in the sandbox's own pid namespace, where `$$` is not a pid of this
    # machine: it is found by a name it alone has instead.
    marker = f"xum-acp-cancel-{uuid.uuid4().hex}"
    fake_llm.script(
        fakellm.tool_call(
            "bash", {"script": f"exec -a {marker} sleep 300", "display_name": "wait"}
        ),
        fakellm.text("Still here."),
    )
    editor = TestEditor()
    # Delegated: the editor has started the command but not yet said which terminal it is when
    # the cancel comes; the bridge must still stop it once the answer arrives.
    editor.terminal_gate = asyncio.Event() if delegated else None
    caps = EditorCapabilities(terminal=delegated)
    async with bridge(editor, repo, env_for(fake_llm), capabilities=caps) as (conn, _proc, _i):
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        turn = asyncio.create_task(
            conn.prompt(session_id=new.session_id, prompt=[text_block("Wait a while")])
        )
        await editor.wait_for(is_call_update("wait", "in_progress"))
        pid = await _poll(lambda: _pid_named(marker), "the command to start")
        await conn.cancel(session_id=new.session_id)
        answer = await asyncio.wait_for(turn, 30)
        assert answer.stop_reason == "cancelled"
        if editor.terminal_gate is not None:
            editor.terminal_gate.set()
        try:
            await _poll(lambda: not alive(pid) or None, "the command to be killed")
        finally:
            if alive(pid):  # a failed test leaves nothing running
                os.kill(pid, signal.SIGKILL)
        # The interrupted call has a result on record: the next turn's request is valid.
        again = await conn.prompt(session_id=new.session_id, prompt=[text_block("Are you there?")])
        assert again.stop_reason == "end_turn"
    assert editor.message_text().endswith("Still here.")
    assert len(editor.terminals) == (1 if delegated else 0)
    second = fake_llm.requests[-1]
    assert any("interrupted" in text.lower() for text in tool_results_anywhere(second))


def tool_results_anywhere(request: fakellm.RecordedRequest) -> list[str]:
    out = []
    for message in request.json["messages"]:
        content = message["content"]
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result":
                inner = block["content"]
                out.append(inner if isinstance(inner, str) else inner[0]["text"])
    return out


async def test_ask_user_question_is_a_permission_request(fake_llm: FakeLLM, repo: Path) -> None:
    question = {
        "question": "Which cache should the service use?",
        "header": "Cache",
        "multiSelect": False,
        "options": [
            {"label": "Redis", "description": "a separate server"},
            {"label": "In memory", "description": "per process"},
        ],
    }
    fake_llm.script(fakellm.tool_call("ask_user_question", {"questions": [question]}))
    fake_llm.set_default(fakellm.text("Noted."))

    def pick_redis(options: list[Any], _call: Any) -> str:
        return next(o.option_id for o in options if o.name == "Redis")

    editor = TestEditor(permission=pick_redis)
    async with bridge(editor, repo, env_for(fake_llm)) as (conn, _proc, _init):
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        await conn.set_session_mode(session_id=new.session_id, mode_id="plan")
        await editor.wait_for(lambda r: r.kind == "current_mode_update")
        answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("Plan a cache")])
        assert answer.stop_reason == "end_turn"

    assert len(editor.permission_requests) == 1
    options, call = editor.permission_requests[0]
    assert [o.name for o in options] == ["Redis", "In memory", "Skip"]
    assert call.title == "Cache"
    asked = editor.of_kind("tool_call")
    assert call.tool_call_id == next(c.tool_call_id for c in asked if c.title == "Ask the user")
    assert "A: Redis" in tool_results(fake_llm.requests[1])[0]


async def test_skipping_a_question_dismisses_it(fake_llm: FakeLLM, repo: Path) -> None:
    question = {
        "question": "Tabs or spaces?",
        "header": "Indent",
        "multiSelect": False,
        "options": [
            {"label": "Tabs", "description": ""},
            {"label": "Spaces", "description": ""},
        ],
    }
    fake_llm.script(fakellm.tool_call("ask_user_question", {"questions": [question]}))
    fake_llm.set_default(fakellm.text("Assuming spaces."))
    editor = TestEditor(permission=lambda _options, _call: "skip")
    async with bridge(editor, repo, env_for(fake_llm)) as (conn, _proc, _init):
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        await conn.set_session_mode(session_id=new.session_id, mode_id="plan")
        await conn.prompt(session_id=new.session_id, prompt=[text_block("Plan the style")])
    assert "did not answer" in tool_results(fake_llm.requests[1])[0]


async def test_files_and_commands_go_through_the_editor(fake_llm: FakeLLM, repo: Path) -> None:
    app = str(repo / "app.py")
    outside = repo.parent / "notes.txt"
    outside.write_text("on disk, outside the workspace\n")
    fake_llm.script(
        fakellm.tool_call("file_read", {"path": "app.py"}),
        fakellm.tool_call("file_read", {"path": str(outside)}),
        fakellm.tool_call(
            "bash", {"script": "echo from-the-terminal; exit 3", "display_name": "echo"}
        ),
        fakellm.tool_call(
            "file_edit_replace_string",
            {"path": "app.py", "old_string": "'unsaved'", "new_string": "'saved'"},
        ),
        fakellm.tool_call(
            "bash", {"script": "exec sleep 300", "display_name": "hang", "timeout_secs": 1}
        ),
        fakellm.text("Done."),
    )
    # The editor holds a change that is not on disk yet: the agent must see it.
    editor = TestEditor(
        buffers={app: "def greet():\n    return 'unsaved'\n", str(outside): "a buffer\n"}
    )
    caps = EditorCapabilities(read=True, write=True, terminal=True)
    async with bridge(editor, repo, env_for(fake_llm), capabilities=caps) as (conn, _p, _i):
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("Fix it")])
        assert answer.stop_reason == "end_turn"

    read, elsewhere, ran, edited, hung = (tool_results(r)[0] for r in fake_llm.requests[1:6])
    assert "return 'unsaved'" in read
    assert app in editor.reads
    assert str(outside) not in editor.reads  # a file outside the workspace is read from disk
    assert "on disk, outside the workspace" in elsewhere
    assert "from-the-terminal" in ran and "[exit code 3]" in ran
    assert "timed out after 1 s" in hung  # the editor was told to kill it
    terminal, hanging = editor.terminals.values()
    assert hanging.process.returncode == -9
    # The script is the command line's last word (after the secret prelude, and bwrap's
    # arguments where the sandbox works).
    assert terminal.command[-3:-1] == ["bash", "-c"]
    assert "from-the-terminal" in terminal.command[-1]
    assert terminal.cwd == str(repo)
    assert terminal.env["XUM_WORKSPACE_ID"] == new.session_id
    assert terminal.env["GIT_TERMINAL_PROMPT"] == "0"
    shown = [u for u in editor.of_kind("tool_call_update") if u.content]
    assert any(c.type == "terminal" and c.terminal_id == "term-1" for u in shown for c in u.content)
    assert "'saved'" in edited or "Replaced" in edited
    assert editor.writes == [(app, "def greet():\n    return 'saved'\n")]
    assert (repo / "app.py").read_text() == "def greet():\n    return 'saved'\n"


async def test_other_runtimes_do_not_delegate(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.script(
        fakellm.tool_call("file_read", {"path": "app.py"}),
        fakellm.tool_call("bash", {"script": "pwd", "display_name": "where"}),
        fakellm.text("Done."),
    )
    editor = TestEditor(buffers={str(repo / "app.py"): "not what is on disk\n"})
    caps = EditorCapabilities(read=True, write=True, terminal=True)
    env = env_for(fake_llm)
    async with bridge(editor, repo, env, "--runtime", "worktree", capabilities=caps) as (
        conn,
        _proc,
        _init,
    ):
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        await conn.prompt(session_id=new.session_id, prompt=[text_block("Look")])
    read, ran = (tool_results(r)[0] for r in fake_llm.requests[1:3])
    assert "return 'hi'" in read and not editor.reads and not editor.terminals
    assert str(repo) not in ran.splitlines()[0]  # a worktree of its own


async def test_load_replays_the_session_and_list_finds_it(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.script(
        fakellm.reply("Let me look.", fakellm.ToolCall("file_read", {"path": "app.py"})),
        fakellm.text("It says hi."),
        fakellm.text("Still hi."),
    )
    env = env_for(fake_llm)
    first = TestEditor()
    async with bridge(first, repo, env) as (conn, _proc, _init):
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        await conn.prompt(session_id=new.session_id, prompt=[text_block("Read app.py")])
        # An idle session holds no writer lock (the host takes it per turn): another bridge
        # may open it too (test_acp_host.py: a turn running in it is refused elsewhere).
        async with bridge(TestEditor(), repo, env) as (other, _p, _i):
            await other.load_session(cwd=str(repo), session_id=new.session_id, mcp_servers=[])

    later = TestEditor()
    async with bridge(later, repo, env) as (conn, _proc, _init):
        listed = await conn.list_sessions(cwd=str(repo))
        row = next(s for s in listed.sessions if s.session_id == new.session_id)
        assert row.title == "Read app.py" and row.cwd == str(repo)
        loaded = await conn.load_session(cwd=str(repo), session_id=new.session_id, mcp_servers=[])
        assert loaded.modes.current_mode_id == "exec"
        replayed = len(later.received)
        assert later.of_kind("user_message_chunk")[0].content.text == "Read app.py"
        assert later.message_text() == "Let me look.It says hi."
        (call,) = later.of_kind("tool_call")
        assert call.title == "Read app.py" and call.kind == "read"
        result = later.of_kind("tool_call_update")[-1]
        assert result.status == "completed" and "return 'hi'" in result.content[0].content.text
        # The loaded session goes on, with its history in the request.
        answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("And now?")])
        assert answer.stop_reason == "end_turn"
        assert later.message_text(after=replayed) == "Still hi."
    assert len(fake_llm.requests[-1].json["messages"]) == 5


async def test_model_thinking_and_mode_are_selectable(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.set_default(fakellm.text("ok"))
    # No fallback chain: the model's refusal is how the turn ends (docs/models.md).
    update_config(lambda config: config.__setitem__("modelFallbacks", {}))
    editor = TestEditor()
    async with bridge(editor, repo, env_for(fake_llm)) as (conn, _proc, _init):
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        sid = new.session_id
        changed = await conn.set_config_option(
            config_id="model", session_id=sid, value="anthropic:claude-sonnet-5-5"
        )
        options = {o.id: o for o in changed.config_options}
        assert options["model"].current_value == "anthropic:claude-sonnet-5-5"
        changed = await conn.set_config_option(config_id="thinking", session_id=sid, value="off")
        assert {o.id: o for o in changed.config_options}["thinking"].current_value == "off"
        with pytest.raises(RequestError) as refused:
            await conn.set_config_option(config_id="model", session_id=sid, value="nope:model")
        assert "nope" in str(refused.value)
        await conn.prompt(session_id=sid, prompt=[text_block("hi")])
        request = fake_llm.requests[-1].json
        assert request["model"] == "claude-sonnet-5-5"
        assert request["thinking"] == {"type": "disabled"}

        # How a turn ended is the stop reason; a failed one is an error saying why.
        fake_llm.script(fakellm.text("I can't help with that.", stop_reason="refusal"))
        refusal = await conn.prompt(session_id=sid, prompt=[text_block("something bad")])
        assert refusal.stop_reason == "refusal"
        fake_llm.script(fakellm.error(400, message="prompt is too long"))
        with pytest.raises(RequestError) as failed:
            await conn.prompt(session_id=sid, prompt=[text_block("a very long prompt")])
        assert "prompt is too long" in str(failed.value)

        await conn.set_session_mode(session_id=sid, mode_id="plan")
        await conn.prompt(session_id=sid, prompt=[text_block("plan something")])
        tools = {t["name"] for t in fake_llm.requests[-1].json["tools"]}
        assert "propose_plan" in tools
        modes = editor.of_kind("current_mode_update")
        assert modes and modes[-1].current_mode_id == "plan"

        # /model in a prompt changes the model and sends nothing to a model.
        sent = len(fake_llm.requests)
        answer = await conn.prompt(session_id=sid, prompt=[text_block("/model haiku")])
        assert answer.stop_reason == "end_turn" and len(fake_llm.requests) == sent
        update = editor.of_kind("config_option_update")[-1]
        model = next(o for o in update.config_options if o.id == "model")
        assert model.current_value == "anthropic:claude-haiku-5-5"
        with pytest.raises(RequestError) as fork:
            await conn.prompt(session_id=sid, prompt=[text_block("/fork other")])
        assert "browser UI" in str(fork.value.data)


async def test_errors_say_what_to_do(fake_llm: FakeLLM, repo: Path) -> None:
    async with bridge(TestEditor(), repo, {}) as (conn, _proc, _init):
        with pytest.raises(RequestError) as no_provider:
            await conn.new_session(cwd=str(repo), mcp_servers=[])
        assert "no model provider is configured" in str(no_provider.value)
        with pytest.raises(RequestError) as relative:
            await conn.new_session(cwd="repo", mcp_servers=[])
        assert "absolute" in json.dumps(relative.value.data)
        with pytest.raises(RequestError) as unknown:
            await conn.prompt(session_id="nosuchsess", prompt=[text_block("hi")])
        assert "no open session" in json.dumps(unknown.value.data)
        with pytest.raises(RequestError) as missing:
            await conn.load_session(cwd=str(repo), session_id="0123456789", mcp_servers=[])
        assert "no xum workspace" in json.dumps(missing.value.data)


def test_stdout_carries_only_protocol_messages(fake_llm: FakeLLM, repo: Path) -> None:
    """Raw JSON-RPC over the pipes: every line on stdout is a protocol message, and the logs
    went to --log-file, not to stdout or stderr."""
    fake_llm.script(
        fakellm.tool_call("bash", {"script": "echo to-the-tool", "display_name": "echo"}),
        fakellm.text("ok"),
    )
    log_file = repo.parent / "acp.log"
    proc = subprocess.Popen(
        [XUM, "acp", "--log-file", str(log_file)],
        cwd=repo,
        env={**os.environ, **env_for(fake_llm)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        proc.stdin.flush()

    def until_response(request_id: int) -> list[dict[str, Any]]:
        assert proc.stdout is not None
        seen = []
        while True:
            line = proc.stdout.readline()
            assert line, "xum acp closed stdout before answering"
            message = json.loads(line)
            assert message["jsonrpc"] == "2.0"
            seen.append(message)
            if message.get("id") == request_id and "method" not in message:
                return seen

    send({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
    until_response(1)
    send({"id": 2, "method": "session/new", "params": {"cwd": str(repo), "mcpServers": []}})
    session_id = until_response(2)[-1]["result"]["sessionId"]
    prompt = [{"type": "text", "text": "run it"}]
    send(
        {"id": 3, "method": "session/prompt", "params": {"sessionId": session_id, "prompt": prompt}}
    )
    messages = until_response(3)
    assert messages[-1]["result"] == {"stopReason": "end_turn"}
    assert all(m.get("method") == "session/update" for m in messages[:-1])
    # Descriptor 1 of the bridge is the log, not the pipe the editor reads: whatever writes
    # to it (a stray print, a library, a child that inherits it) cannot reach the protocol.
    pipe = f"pipe:[{os.fstat(proc.stdout.fileno()).st_ino}]"
    assert os.readlink(f"/proc/{proc.pid}/fd/1") == str(log_file)
    assert pipe in {
        os.readlink(f"/proc/{proc.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{proc.pid}/fd")
    }
    proc.stdin.close()
    rest = proc.stdout.read()
    stderr = proc.stderr.read() if proc.stderr else b""
    assert proc.wait(timeout=30) == 0
    for line in rest.splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert b"to-the-tool" not in rest
    logged = log_file.read_text()
    assert f"new session {session_id}" in logged
    assert stderr == b""


async def _poll(read: Callable[[], Any], what: str, timeout: float = 15.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = read()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def _pid_named(name: str) -> int | None:
    """The pid (in this machine's namespace) of the process whose argv[0] is `name`."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv0 = (entry / "cmdline").read_bytes().split(b"\0", 1)[0]
        except OSError:
            continue
        if argv0 == name.encode():
            return int(entry.name)
    return None
