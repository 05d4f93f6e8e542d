"""The status line under the composer: the workspace, its status, the context it used and its
cost, then the key hints, fitted to the terminal's width.

What matters most stays: the hints go first when the line is too long, then the workspace's
name is shortened, so the cost is never cut at the right edge of an 80-column terminal. The
workspace's ports (`ports 20010-20019`) follow the cost only when the whole line fits.
"""

from __future__ import annotations

from rich.text import Text

from xum.engine.display import strip_controls
from xum.tui.runner import Workspace
from xum.workspaces.ports import block_for

ELLIPSIS = "…"
MIN_NAME = 8  # a name is never cut shorter than this (the line is cut instead)


def status_line(ws: Workspace | None, width: int, *, list_hidden: bool = False) -> Text:
    """The line for `ws` (None: the new-workspace row) in `width` cells. `list_hidden`: the
    workspace list is hidden, so its key is worth a hint."""
    hints = ["F1 help", "Ctrl+O list"] if list_hidden else ["F1 help"]
    if ws is None:
        facts = Text("new workspace · Enter starts it in the project directory")
        return _fit(Text(), facts, hints, width)
    name = Text(strip_controls(ws.record.name), style="bold")
    facts = _facts(ws)
    block = block_for(ws.record)
    if block is not None:
        with_ports = facts + Text(f" · ports {block.label}")
        hinted = len("  ·  " + " · ".join(hints))  # the ports go before any hint does
        if (name + with_ports).cell_len + hinted <= width:
            facts = with_ports
    return _fit(name, facts, hints, width)


def _facts(ws: Workspace) -> Text:
    from xum.llm import catalog  # not before the first frame

    text = Text(f" · {ws.status}")
    waiting = ws.transcript.governor
    if waiting is not None:  # the process's governor holds it back (docs/governor.md)
        text.append(f" · waiting: {waiting.reason}", style="bold yellow")
    usage = ws.transcript.usage
    model = usage.model or ws.record.model
    if usage.context_tokens and model and ":" in model:
        provider, _, model_id = model.partition(":")
        window = catalog.context_window(provider, model_id)
        share = usage.context_tokens / window if window else 0
        text.append(f" · context {tokens(usage.context_tokens)}/{tokens(window)}")
        text.append(f" ({share:.0%})")
    cost = usage.session_cost
    text.append(" · cost unknown" if cost is None else f" · ${cost:.4f}")
    return text


def _fit(name: Text, facts: Text, hints: list[str], width: int) -> Text:
    """name + facts + as many hints as fit; with none fitting, the name shortened."""
    for kept in range(len(hints), -1, -1):
        line = name + facts
        if kept:
            line.append("  ·  " + " · ".join(hints[:kept]), style="dim")
        if line.cell_len <= width:
            return line
    room = width - facts.cell_len
    if room >= MIN_NAME and name.cell_len > room:
        name = name[: room - 1] + Text(ELLIPSIS, style="bold")
    line = name + facts
    line.truncate(width, overflow="ellipsis")
    return line


def tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n < 100_000 else f"{n // 1000}k"
