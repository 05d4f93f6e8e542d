"""MCP servers in a workspace session opened through the one assembly, against the fake LLM:
cache stability (one change row), hot reload, idle stop, interrupts, workspace overrides and
streamable HTTP. Real server processes (the SDK-written test server), real session logs, real
git; order comes from barrier files the server writes and bounded polls, never from sleeps."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.support import SERVER, server_entry, write_config
from tests.processes import alive
from xum.context.frozen import prefix_breaks
from xum.store import frame_types as ev
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.opening import open_session
from xum.workspaces.assembly import WorkspaceSession
from xum.workspaces.mcp.paths import local_path

pytestmark = pytest.mark.repo(name="proj", files={"app.py": "x = 1\n"}, message="first")


Event = dict[str, Any]


@dataclass
class Opened:
    session: WorkspaceSession
    events: list[Event] = field(default_factory=list)

    @property
    def frames(self) -> list[Any]:
        return list(SessionLog.open(self.session.record.id).frames)

    def rows(self) -> list[Any]:
        return [
            f
            for f in self.frames
            if f.type == ev.SYNTHETIC_MESSAGE and f.data.get("kind") == "context_update"
        ]

    def segments(self) -> list[Any]:
        return [f for f in self.frames if f.type == ev.CONTEXT_FROZEN]

    def results(self) -> list[Event]:
        return [e for e in self.events if e["type"] == "tool-result"]


@pytest.fixture
def barriers(tmp_path: Path) -> Path:
    path = tmp_path / "barriers"
    path.mkdir()
    return path


@pytest.fixture
async def opened(repo: Path, fake_llm: FakeLLM) -> AsyncIterator[Opened]:
    async with open_session(repo, fake_llm, name_hint="mcp") as (session, events):
        yield Opened(session, events)


def tools_of(request: Any) -> list[str]:
    return [t["name"] for t in request.json.get("tools", [])]


async def until(check: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def pid(barriers: Path) -> int:
    return int((barriers / "pid").read_text())


async def test_tools_changing_mid_segment_are_one_change_row_then_load_on_search(
    opened: Opened, fake_llm: FakeLLM, xum_root: Path, barriers: Path
) -> None:
    config = xum_root / "mcp.jsonc"
    write_config(config, {"t": server_entry(barriers, tools="echo")}, toolSearch=False)
    fake_llm.script(fakellm.text("one"))
    await opened.session.agent.run_turn("first")
    first_pid = pid(barriers)
    first = fake_llm.requests[-1]
    assert [n for n in tools_of(first) if n.startswith("mcp__")] == ["mcp__t__echo"]

    # Hot reload: the entry changed, so the server restarts and now offers whoami too.
    write_config(config, {"t": server_entry(barriers, tools="echo,whoami")}, toolSearch=False)
    fake_llm.script(fakellm.text("two"))
    await opened.session.agent.run_turn("second")
    second = fake_llm.requests[-1]
    assert pid(barriers) != first_pid
    assert not alive(first_pid), "the old server process outlived the reload"
    # The tool list is the segment's frozen one, byte for byte; the change is one row.
    assert second.json["tools"] == first.json["tools"]
    assert second.json["system"] == first.json["system"]
    (row,) = opened.rows()
    assert row.data["changed"] == ["mcp_tools"]
    text = row.data["message"]["content"][0]["text"]
    assert "mcp__t__whoami" in text and "tool_catalog_search" in text
    assert len(opened.segments()) == 1

    # A third message with nothing new: no further row.
    fake_llm.script(
        fakellm.tool_call("tool_catalog_search", {"query": "whoami"}),
        fakellm.tool_call("mcp__t__whoami", {}),
        fakellm.text("three"),
    )
    await opened.session.agent.run_turn("third")
    assert len(opened.rows()) == 1
    # Loading the tool starts a new segment with it (the one recorded prefix break).
    segments = opened.segments()
    assert [s.data["reason"] for s in segments] == ["start", "mcp_tools_loaded"]
    assert "mcp__t__whoami" in tools_of(fake_llm.requests[-2])
    assert [b["reason"] for b in prefix_breaks(opened.frames)] == ["mcp_tools_loaded"]
    whoami = opened.results()[-1]
    assert "pid=" in whoami["output"] and not whoami["is_error"]


async def test_hot_reload_stops_removed_servers_and_starts_new_ones(
    opened: Opened, fake_llm: FakeLLM, xum_root: Path, tmp_path: Path
) -> None:
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    config = xum_root / "mcp.jsonc"
    write_config(config, {"a": server_entry(a_dir, tools="echo")}, toolSearch=False)
    fake_llm.script(fakellm.text("one"))
    await opened.session.agent.run_turn("first")
    a_pid = pid(a_dir)
    write_config(config, {"b": server_entry(b_dir, tools="echo")}, toolSearch=False)
    fake_llm.script(fakellm.tool_call("mcp__a__echo", {"text": "x"}), fakellm.text("two"))
    await opened.session.agent.run_turn("second")
    await until(lambda: not alive(a_pid), "the removed server to stop")
    assert alive(pid(b_dir))
    (row,) = opened.rows()
    text = row.data["message"]["content"][0]["text"]
    assert "No longer available" in text and "mcp__a__echo" in text
    assert "mcp__b__echo" in text
    (gone,) = opened.results()
    assert gone["is_error"] and "no MCP tool named 'mcp__a__echo'" in gone["output"]


async def test_idle_servers_stop_and_start_again_on_the_next_call(
    repo: Path, fake_llm: FakeLLM, xum_root: Path, barriers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XUM_MCP_IDLE_TIMEOUT_S", "0.3")  # the test-only idle timeout
    write_config(xum_root / "mcp.jsonc", {"t": server_entry(barriers)}, toolSearch=False)
    async with open_session(repo, fake_llm, name_hint="idle") as (session, events):
        fake_llm.script(fakellm.tool_call("mcp__t__echo", {"text": "a"}), fakellm.text("one"))
        await session.agent.run_turn("first")
        first_pid = pid(barriers)
        await until(lambda: not alive(first_pid), "the idle server to stop")
        assert session.mcp is not None
        assert {s.name: s.status for s in session.mcp.states()} == {"t": "idle"}
        fake_llm.script(fakellm.tool_call("mcp__t__echo", {"text": "b"}), fakellm.text("two"))
        await session.agent.run_turn("second")
        assert pid(barriers) != first_pid
        outputs = [e["output"] for e in events if e["type"] == "tool-result"]
        assert outputs == ["a", "b"]
        # Stopping for idleness changed nothing the model sees.
        assert not [
            f for f in SessionLog.open(session.record.id).frames if f.type == ev.SYNTHETIC_MESSAGE
        ]


async def test_an_interrupt_cancels_the_running_call_on_the_server(
    opened: Opened, fake_llm: FakeLLM, xum_root: Path, barriers: Path
) -> None:
    write_config(xum_root / "mcp.jsonc", {"t": server_entry(barriers)}, toolSearch=False)
    fake_llm.script(fakellm.tool_call("mcp__t__slow", {"seconds": 300}), fakellm.text("x"))
    agent = opened.session.agent
    turn = asyncio.create_task(agent.run_turn("wait"))
    await until(lambda: (barriers / "started-slow").exists(), "the slow call to start")
    agent.interrupt()
    result = await turn
    assert result.reason == "interrupted"
    await until(lambda: (barriers / "cancelled-slow").exists(), "the server to see the cancel")
    assert alive(pid(barriers)), "cancelling a call must not kill the server"


async def test_workspace_overrides_disable_servers_and_narrow_tools(
    opened: Opened, fake_llm: FakeLLM, xum_root: Path, tmp_path: Path
) -> None:
    off_dir = tmp_path / "off"
    off_dir.mkdir()
    write_config(
        xum_root / "mcp.jsonc",
        {"off": server_entry(off_dir), "t": server_entry()},
        toolSearch=False,
    )
    workspace = opened.session.record.path
    local_path(workspace).parent.mkdir(parents=True, exist_ok=True)
    local_path(workspace).write_text(
        '{"servers": {"off": {"enabled": false}, "t": {"allowedTools": ["echo"]}}} // mine\n'
    )
    fake_llm.script(fakellm.text("ok"))
    await opened.session.agent.run_turn("hi")
    assert [n for n in tools_of(fake_llm.requests[-1]) if n.startswith("mcp__")] == ["mcp__t__echo"]
    assert not (off_dir / "pid").exists(), "a disabled server was started"
    assert opened.session.mcp is not None
    states = {s.name: s.status for s in opened.session.mcp.states()}
    assert states == {"off": "disabled", "t": "ready"}


@pytest.fixture
def http_server(barriers: Path) -> Any:
    env = {**os.environ, "MCP_TEST_DIR": str(barriers), "MCP_TEST_TOKEN": "tok-123456"}
    proc = subprocess.Popen([sys.executable, str(SERVER), "--http", "0"], env=env)
    try:
        deadline = time.monotonic() + 30
        while not (barriers / "port").exists():
            assert proc.poll() is None, "the HTTP test server exited"
            assert time.monotonic() < deadline, "the HTTP test server did not start"
            time.sleep(0.02)
        yield f"http://127.0.0.1:{(barriers / 'port').read_text()}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


async def test_streamable_http_server_gets_its_static_headers(
    opened: Opened, fake_llm: FakeLLM, xum_root: Path, http_server: str
) -> None:
    write_config(
        xum_root / "mcp.jsonc",
        {
            "web": {"url": http_server, "headers": {"Authorization": "Bearer tok-123456"}},
            "nokey": {"url": http_server},
        },
        toolSearch=False,
    )
    fake_llm.script(
        fakellm.tool_call("mcp__web__echo", {"text": "over http"}), fakellm.text("done")
    )
    await opened.session.agent.run_turn("hi")
    (echo,) = opened.results()
    assert echo["output"] == "over http" and not echo["is_error"]
    failed = [e for e in opened.events if e["type"] == "advisory" and "'nokey'" in e["message"]]
    assert failed and failed[0]["kind"] == "mcp-server-failed"
    assert "HTTP 401" in failed[0]["message"]


async def test_a_server_announcing_new_tools_is_listed_again_as_one_row(
    opened: Opened, fake_llm: FakeLLM, xum_root: Path
) -> None:
    write_config(xum_root / "mcp.jsonc", {"t": server_entry(tools="echo,grow")}, toolSearch=False)
    fake_llm.script(fakellm.tool_call("mcp__t__grow", {}), fakellm.text("grown"))
    await opened.session.agent.run_turn("grow")
    # The notification arrived during the turn: the next request lists again, one row, the
    # frozen tool list unchanged.
    fake_llm.script(fakellm.text("ok"))
    await opened.session.agent.run_turn("again")
    (row,) = opened.rows()
    assert row.data["changed"] == ["mcp_tools"]
    assert "mcp__t__extra" in row.data["message"]["content"][0]["text"]
    assert "mcp__t__extra" not in tools_of(fake_llm.requests[-1])
    assert len(opened.segments()) == 1


async def test_images_are_saved_links_listed_and_long_results_bounded(
    opened: Opened, fake_llm: FakeLLM, xum_root: Path
) -> None:
    write_config(xum_root / "mcp.jsonc", {"t": server_entry(tools="picture,big")}, toolSearch=False)
    fake_llm.script(
        fakellm.tool_call("mcp__t__picture", {}),
        fakellm.tool_call("mcp__t__big", {"lines": 20000}),
        fakellm.text("seen"),
    )
    await opened.session.agent.run_turn("show me")
    picture, big = opened.results()
    assert picture["output"].startswith("here is a picture\n[image (image/png, 70 bytes) saved to ")
    saved = Path(picture["meta"]["files"][0]["path"])
    assert saved.read_bytes().startswith(b"\x89PNG")
    assert "[resource link 'readme': uri: file:///tmp/readme.md" in picture["output"]
    assert "bytes omitted" in big["output"] and "line 19999" in big["output"]
    spill = Path(big["meta"]["spill_path"])
    assert spill.read_text().count("\n") >= 19999
