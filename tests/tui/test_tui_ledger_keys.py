"""Every key the terminal UI's help lists has its own `tui key` row in PARITY.md."""

from __future__ import annotations

import re
from pathlib import Path

from xum.tui.keys import KEYS

LEDGER = Path(__file__).resolve().parents[2] / "PARITY.md"


def ledger_keys() -> dict[str, str]:
    """Each key named in a `tui key` row, with the row's notes."""
    keys: dict[str, str] = {}
    for line in LEDGER.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and cells[1] == "tui key":
            for name in re.findall(r"`([^`]+)`", cells[0]):
                keys[name] = cells[3]
    return keys


def test_every_key_of_the_help_has_a_ledger_row() -> None:
    listed = ledger_keys()
    helped = {name.strip() for k in KEYS for name in k.keys.split(",")}
    missing = sorted(helped - set(listed))
    assert not missing, f"keys in tui/keys.py without a PARITY.md row: {missing}"


def test_the_ledger_says_what_f7_and_f8_do() -> None:
    listed = ledger_keys()
    assert "Start Here" in listed["F7"]
    assert "F7" not in listed["F8"]
