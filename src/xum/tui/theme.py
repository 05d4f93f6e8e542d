"""The terminal UI's first theme, from what the terminal says of its background."""

from __future__ import annotations

import os
from collections.abc import Mapping


def initial_theme(env: Mapping[str, str] | None = None) -> str:
    """Dark unless the terminal says its background is light (`COLORFGBG`, e.g. `0;15`). The
    ANSI themes draw with the terminal's own colours and background."""
    env = os.environ if env is None else env  # read only: nothing is handed on
    fgbg = env.get("COLORFGBG", "")
    background = fgbg.rsplit(";", 1)[-1] if fgbg else ""
    return "ansi-light" if background in ("7", "15") else "ansi-dark"
