"""How `xum run` shows live tool output: every event in --json, dimmed on a terminal, not in
logs, never a background stream or a terminal control sequence in text mode."""

from __future__ import annotations

import io
import json

from xum.cli.render import JsonRenderer, TextRenderer
from xum.engine import events as E


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def live(text: str, stream: str = "output") -> E.ToolOutput:
    return E.ToolOutput(call_id="c1", stream=stream, text=text)


CALL = E.ToolCall(call_id="c1", name="bash", arguments={"script": "x"})
RESULT = E.ToolResult(
    seq=4, ts=0, call_id="c1", name="bash", is_error=False, output="", meta={"exit_code": 0}
)


def test_a_terminal_sees_foreground_output_dimmed_and_no_control_sequences() -> None:
    out, err = io.StringIO(), Terminal()
    render = TextRenderer(out, err)
    for event in (
        CALL,
        live("\x1b[31mred\x1b[0m line\n", "hook:tool_pre"),
        live("progress\r50%\x1b]0;title\x07 half"),
        live("server says hi\n", "bash:abc12345"),
        RESULT,
    ):
        render(event)
    shown = err.getvalue()
    assert "red line\n" in shown and "progress50% half" in shown
    assert "\x1b[31m" not in shown and "\x07" not in shown and "\r" not in shown
    assert "server says hi" not in shown  # background output would interleave with the answer
    assert shown.endswith("\x1b[2m✓ bash x → exit 0\x1b[0m\n")
    assert "half\x1b[0m\n" in shown  # the result line starts on a line of its own
    assert out.getvalue() == ""


def test_logs_keep_one_line_per_tool() -> None:
    err = io.StringIO()
    render = TextRenderer(io.StringIO(), err)
    for event in (CALL, live("lots of output\n"), RESULT):
        render(event)
    assert err.getvalue() == "✓ bash x → exit 0\n"


def test_json_prints_every_live_event() -> None:
    out = io.StringIO()
    render = JsonRenderer(out)
    render(live("one\n"))
    render(live("two\n", "bash:abc12345"))
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines == [live("one\n").to_dict(), live("two\n", "bash:abc12345").to_dict()]
