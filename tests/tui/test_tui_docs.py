"""docs/tui.md and the UI's own help list the same keys."""

from __future__ import annotations

from pathlib import Path

from xum.tui.keys import KEYS

DOC = Path(__file__).resolve().parents[2] / "docs" / "tui.md"


def test_the_docs_key_table_is_the_help_screens() -> None:
    text = DOC.read_text(encoding="utf-8")
    table = text.split("## Keys", 1)[1].split("\n## ", 1)[0]
    rows = [
        tuple(cell.strip() for cell in line.strip().strip("|").split("|"))
        for line in table.splitlines()
        if line.startswith("| ") and not line.startswith("| Keys")
    ]
    assert rows == [(k.keys, k.action, k.area) for k in KEYS]
