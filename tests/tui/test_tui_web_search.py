"""The terminal UI shows a reply's provider-side web searches and cited pages as plain notes:
the query, then titles and links, never markup from the results."""

from __future__ import annotations

import io

from rich.console import Console

from xum.engine import events as E
from xum.tui import cards
from xum.tui.transcript import NoticeEntry, Transcript


def reply(**extra: object) -> E.AssistantMessage:
    return E.AssistantMessage(
        seq=3,
        ts=0,
        text="It is sunny.",
        reasoning="",
        tool_calls=[],
        finish_reason="stop",
        usage=None,
        cost_usd=None,
        **extra,  # type: ignore[arg-type]
    )


def drawn(entry: NoticeEntry) -> str:
    out = io.StringIO()
    Console(file=out, width=100, color_system=None).print(cards.notice(entry))
    return out.getvalue()


def test_searches_and_citations_become_plain_notes() -> None:
    t = Transcript()
    t.fold(
        reply(
            web_searches=[
                {
                    "query": "weather in Paris",
                    "results": [
                        {
                            "title": "[bold]Paris[/bold] \x1b[31mforecast",
                            "url": "https://w.example/p",
                        }
                    ],
                },
                {"query": "again", "results": [], "error": "max_uses_exceeded"},
            ],
            citations=[{"title": "Paris forecast", "url": "https://w.example/p"}],
        )
    )
    notes = [e for e in t.entries if isinstance(e, NoticeEntry)]
    assert len(notes) == 3
    first = drawn(notes[0])
    assert "searched: weather in Paris (1 results)" in first
    # Rich markup is not interpreted and terminal escapes are dropped.
    assert "[bold]Paris[/bold] forecast <https://w.example/p>" in first
    assert "\x1b" not in first
    assert "searched: again (failed: max_uses_exceeded)" in drawn(notes[1])
    assert "sources:" in drawn(notes[2]) and "https://w.example/p" in drawn(notes[2])


def test_a_reply_without_searches_adds_no_notes() -> None:
    t = Transcript()
    t.fold(reply())
    assert not [e for e in t.entries if isinstance(e, NoticeEntry)]
