"""Amounts of money as users type them: `$5`, `5.00`, `500c` (the goal budget's forms)."""

from __future__ import annotations

import math
import re

_AMOUNT = re.compile(r"\$?\s*(\d+(?:\.\d+)?|\.\d+)\s*(c)?", re.IGNORECASE)


def parse_cents(text: str) -> int:
    """Whole cents from `$5`, `5.00`, `5` (dollars) or `500c` (cents). ValueError for anything
    else, zero or less included."""
    match = _AMOUNT.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"'{text}' is not an amount (write $5, 5.00 or 500c)")
    number = float(match.group(1))
    cents = number if match.group(2) else number * 100
    if not math.isfinite(cents) or cents < 1:
        raise ValueError(f"'{text}' is less than one cent; the amount must be at least 1c")
    return round(cents)
