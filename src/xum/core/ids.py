"""Identifiers. Only the backend mints them; callers never build one from other fields."""

from __future__ import annotations

import os
import re
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lowercase
_SUFFIX_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"  # no 0/o/1/l look-alikes
assert len(_SUFFIX_ALPHABET) == 32  # so a random byte picks a letter without bias

# Randomness comes from os.urandom directly (what `secrets` uses): importing `secrets` pulls in
# `random` and `hmac`, which nothing else on `xum run`'s start-up path needs.


def _b32(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def sortable_id() -> str:
    """A 26-character id that sorts by creation time (48-bit ms clock + 80 random bits)."""
    ms = time.time_ns() // 1_000_000
    return _b32(ms, 10) + _b32(int.from_bytes(os.urandom(10), "big"), 16)


def event_id() -> str:
    return "ev_" + sortable_id()


def workspace_id() -> str:
    """Workspace ids are short random hex: random, so telemetry-free and unguessable across hosts."""
    return os.urandom(5).hex()


def random_suffix(length: int = 4) -> str:
    return "".join(_SUFFIX_ALPHABET[byte & 31] for byte in os.urandom(length))


_NAME_CLEAN = re.compile(r"[^a-z0-9]+")


def workspace_name(base: str, suffix: str | None = None) -> str:
    """`feature-x7k2`: a slug of `base` (a branch-safe name) plus a random suffix."""
    slug = _NAME_CLEAN.sub("-", base.lower()).strip("-")[:40].strip("-") or "workspace"
    return f"{slug}-{suffix or random_suffix()}"
