"""Prompt-cache accounting the way the providers do it, over a request's prompt elements.

A wire module turns a request body into a `CacheInput`: the prompt as an ordered list of
elements (bytes; see `tokens.py`), the positions of explicit breakpoints, and a namespace
(model, plus OpenAI's `prompt_cache_key`). Prefix identity is a running hash over the
elements, so "the same prefix" means byte-identical elements in the same order.

Anthropic (explicit breakpoints, `PromptCache.account_breakpoints`):
  - only prefixes ending at a `cache_control` breakpoint are written, and only when they are at
    least `anthropic_min_tokens` long;
  - a read is the longest previously written prefix that ends at a breakpoint of this request
    or at one of the `anthropic_lookback` blocks before one (the provider's lookback), so a
    conversation whose last breakpoint moves forward each turn still hits the previous turn;
  - `cache_creation_input_tokens` = the prefix up to the last breakpoint minus what was read;
    `input_tokens` = the rest (Anthropic's input excludes cached tokens).

OpenAI (automatic, `PromptCache.account_automatic`): every request's prefixes are cached; a
read is the longest element-aligned prefix seen before in the same namespace, rounded down to
`openai_min_tokens + k * openai_increment` and counted only from `openai_min_tokens` up.
Matching is per element, not per token: a shared start of one long message does not count.

Every request also gets `matched_prefix_tokens`: the longest element-aligned prefix shared
with any earlier request in its namespace, whatever the breakpoints and minimums, so a test
can tell "the bytes changed" (a prefix break) from "the breakpoints were misplaced".
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field

from xum.testing.fakellm.tokens import count


@dataclass(slots=True)
class CacheConfig:
    openai_min_tokens: int = 1024  # the real minimum; tests with short prompts lower it
    openai_increment: int = 128
    anthropic_min_tokens: int = 0  # real: 1024-4096 depending on the model
    anthropic_lookback: int = 20  # blocks checked before each breakpoint


@dataclass(frozen=True, slots=True)
class Breakpoint:
    index: int  # the element the prefix ends at (inclusive)
    ttl: str = "5m"


@dataclass(slots=True)
class CacheInput:
    namespace: str
    elements: list[bytes] = field(default_factory=list)
    breakpoints: list[Breakpoint] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class CacheUsage:
    """Per-request figures. `prompt_tokens` = read + write + uncached."""

    prompt_tokens: int
    read_tokens: int
    write_tokens: int
    uncached_tokens: int
    matched_prefix_tokens: int
    write_1h_tokens: int = 0  # the part of write_tokens under a 1-hour breakpoint

    @property
    def hit(self) -> bool:
        return self.read_tokens > 0


def _prefix_hashes(inp: CacheInput) -> tuple[list[bytes], list[int]]:
    h = hashlib.blake2b(inp.namespace.encode(), digest_size=16)
    hashes: list[bytes] = []
    cumulative: list[int] = []
    total = 0
    for element in inp.elements:
        # Length-prefix each element so two elements never hash like their concatenation.
        h.update(len(element).to_bytes(8, "little"))
        h.update(element)
        hashes.append(h.copy().digest())
        total += count(element)
        cumulative.append(total)
    return hashes, cumulative


class PromptCache:
    """Thread-safe store of prefix hashes; `clear()` empties it."""

    def __init__(self, config: CacheConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._seen: set[bytes] = set()  # every element-aligned prefix of every request
        self._written: set[bytes] = set()  # Anthropic prefixes written at a breakpoint

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()
            self._written.clear()

    def _matched(self, hashes: list[bytes], cumulative: list[int]) -> int:
        for i in range(len(hashes) - 1, -1, -1):
            if hashes[i] in self._seen:
                return cumulative[i]
        return 0

    def account_breakpoints(self, inp: CacheInput) -> CacheUsage:
        hashes, cum = _prefix_hashes(inp)
        total = cum[-1] if cum else 0
        cfg = self.config
        bps = sorted(
            {b.index: b for b in inp.breakpoints if 0 <= b.index < len(hashes)}.values(),
            key=lambda b: b.index,
        )
        with self._lock:
            matched = self._matched(hashes, cum)
            read_pos = -1
            for bp in bps:
                low = max(-1, bp.index - cfg.anthropic_lookback)
                for i in range(bp.index, low, -1):
                    if hashes[i] in self._written:
                        read_pos = max(read_pos, i)
                        break
            read = cum[read_pos] if read_pos >= 0 else 0
            write = write_1h = 0
            start = read_pos
            for bp in bps:
                if bp.index <= start or cum[bp.index] < cfg.anthropic_min_tokens:
                    continue
                segment = cum[bp.index] - (cum[start] if start >= 0 else 0)
                write += segment
                if bp.ttl == "1h":
                    write_1h += segment
                start = bp.index
            for bp in bps:
                if cum[bp.index] >= cfg.anthropic_min_tokens:
                    self._written.add(hashes[bp.index])
            self._seen.update(hashes)
        return CacheUsage(total, read, write, total - read - write, matched, write_1h)

    def account_automatic(self, inp: CacheInput) -> CacheUsage:
        hashes, cum = _prefix_hashes(inp)
        total = cum[-1] if cum else 0
        with self._lock:
            matched = self._matched(hashes, cum)
            self._seen.update(hashes)
        read = self._quantize(matched)
        # What this request adds to the cache, for the recording (OpenAI does not report it).
        write = max(0, self._quantize(total) - read)
        return CacheUsage(total, read, write, total - read, matched)

    def _quantize(self, tokens: int) -> int:
        lo, step = self.config.openai_min_tokens, max(1, self.config.openai_increment)
        if tokens < lo or tokens <= 0:
            return 0
        return lo + (tokens - lo) // step * step
