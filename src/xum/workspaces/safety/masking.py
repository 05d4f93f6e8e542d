"""Masking project secret values in tool output before it is logged or sent to a model.

Commands and hooks get the project's secrets as environment variables, so `echo $TOKEN` would
otherwise put the token in the session log and in the next request. Every occurrence of a secret
value in a tool result (and in the live output streams) becomes `[secret:NAME]`.

xum's own secrets are masked the same way (`SecretMasker.for_project`): they never reach a
command's environment (`xum.core.ownsecrets`), but a command can still come across them, in
`providers.jsonc`, a key file, `server.lock` or a shell profile, and they are worse to leak than a
project's. The set is the keys in xum's environment, the server's token (held by this process, or
left on disk by a server on the same `$XUM_ROOT`: `server/auth-token`, `server.lock`), and the
keys `providers.jsonc` holds or points at. It is taken when the masker is made and taken again
before every tool call (`refresh`), so a server started beside a running `xum run`, or a key
added meanwhile, is masked from the next call on.

Live streams are masked on bytes, before they are decoded: `SecretMasker.opener` wraps a call's
`open_output`, so each stream a tool or hook opens masks what passes and holds back a tail that
may be the start of a secret split across two writes, until the next write or the stream's close
decides it. A background command's stream closes when its process ends, so its last held-back
bytes wait until then.

Only values of at least MIN_SECRET_LENGTH characters are masked: a secret like `1` or `true`
would turn every digit or boolean in every output into noise, and is no secret worth hiding.
Masking is exact-match: a value the command transformed (base64, split across lines, reversed)
is not recognised. It protects against accidents, not against a determined exfiltration.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xum.tools.base import OutputOpener, OutputStream

MIN_SECRET_LENGTH = 6


def xum_secrets() -> dict[str, str]:
    """Name -> value of every secret of xum's own it can find now (see the module docstring).
    A `providers.jsonc` that does not parse contributes nothing (whoever reads it for a request
    reports the error)."""
    from xum.core.errors import ConfigError
    from xum.core.ownsecrets import known_values, server_tokens_on_disk
    from xum.store.providers import key_values, load_providers

    found = {**server_tokens_on_disk(), **known_values()}
    with contextlib.suppress(ConfigError):
        found.update(key_values(load_providers()))
    return found


@dataclass(frozen=True, slots=True)
class _Patterns:
    """One set of secrets, compiled. Replaced whole on `SecretMasker.refresh`, so a stream
    written from another thread meanwhile sees the old set or the new one, never a mix."""

    secrets: dict[str, str]
    by_value: dict[str, str]  # value -> name
    by_bytes: dict[bytes, bytes]  # value -> its mask
    text_re: re.Pattern[str] | None
    bytes_re: re.Pattern[bytes] | None
    longest: int

    @classmethod
    def build(cls, secrets: Mapping[str, str], min_length: int) -> _Patterns:
        by_value: dict[str, str] = {}
        # Longest first, so a secret that contains another is replaced whole.
        for name, value in sorted(secrets.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            if len(value) >= min_length and value not in by_value:
                by_value[value] = name
        by_bytes = {v.encode(): f"[secret:{n}]".encode() for v, n in by_value.items()}
        return cls(
            secrets=dict(secrets),
            by_value=by_value,
            by_bytes=by_bytes,
            text_re=re.compile("|".join(re.escape(v) for v in by_value)) if by_value else None,
            bytes_re=re.compile(b"|".join(re.escape(v) for v in by_bytes)) if by_value else None,
            longest=max((len(v) for v in by_bytes), default=0),
        )


class SecretMasker:
    def __init__(self, secrets: Mapping[str, str], *, min_length: int = MIN_SECRET_LENGTH) -> None:
        self._min_length = min_length
        # for_project: the project's secrets, kept to rebuild with xum's own on `refresh`.
        self._project: dict[str, str] | None = None
        self._patterns = _Patterns.build(secrets, min_length)

    @classmethod
    def for_project(cls, secrets: Mapping[str, str]) -> SecretMasker:
        """A masker for a project's commands: its secrets and xum's own (`xum_secrets`), which
        `refresh` takes again."""
        masker = cls({**xum_secrets(), **secrets})
        masker._project = dict(secrets)
        return masker

    def refresh(self) -> None:
        """Take xum's own secrets again (a masker made by `for_project`; others keep their
        set). Called before each tool call: a few small file reads, and the patterns are only
        rebuilt when a value changed. Streams already open use the new set from their next
        write."""
        if self._project is None:
            return
        current = {**xum_secrets(), **self._project}
        if current != self._patterns.secrets:
            self._patterns = _Patterns.build(current, self._min_length)

    @property
    def active(self) -> bool:
        return self._patterns.text_re is not None

    def mask(self, text: str) -> str:
        p = self._patterns
        if p.text_re is None or not text:
            return text
        return p.text_re.sub(lambda m: f"[secret:{p.by_value[m.group(0)]}]", text)

    def mask_bytes(self, data: bytes) -> bytes:
        p = self._patterns
        if p.bytes_re is None or not data:
            return data
        return p.bytes_re.sub(lambda m: p.by_bytes[m.group(0)], data)

    def mask_value(self, value: Any) -> Any:
        """Strings masked anywhere inside lists and dicts (tool result metadata)."""
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, list):
            return [self.mask_value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.mask_value(v) for k, v in value.items()}
        return value

    def held_back(self, data: bytes) -> int:
        """How many trailing bytes of `data` could be the start of a secret still arriving."""
        p = self._patterns
        for k in range(min(len(data), p.longest - 1), 0, -1):
            tail = data[-k:]
            if any(v.startswith(tail) for v in p.by_bytes):
                return k
        return 0

    def stream(self, inner: OutputStream) -> OutputStream:
        """`inner`, masked (an `OutputFilter`: for what a command's output leaves on disk)."""
        return MaskingStream(self, inner)

    def opener(self, inner: OutputOpener) -> OutputOpener:
        """`inner`, with every stream it opens masked (see MaskingStream)."""
        if isinstance(inner, MaskingOpener) and inner.masker is self:
            return inner  # already masked by this masker: do not mask twice
        return MaskingOpener(self, inner)


class MaskingOpener:
    """An `OutputOpener` whose streams are masked by `masker` on their way to `inner`'s."""

    __slots__ = ("inner", "masker")

    def __init__(self, masker: SecretMasker, inner: OutputOpener) -> None:
        self.masker = masker
        self.inner = inner

    def __call__(self, name: str) -> OutputStream:
        return MaskingStream(self.masker, self.inner(name))


class MaskingStream:
    """Wraps a live output stream: chunks are masked as they pass, and a tail that might be the
    first part of a secret split across two chunks is held back until the next chunk (or
    `close`) decides it."""

    __slots__ = ("_pending", "inner", "masker")

    def __init__(self, masker: SecretMasker, inner: OutputStream) -> None:
        self.masker = masker
        self.inner = inner
        self._pending = b""

    def write(self, data: bytes) -> None:
        data = self.masker.mask_bytes(self._pending + data)
        hold = self.masker.held_back(data)
        self._pending = data[len(data) - hold :] if hold else b""
        ready = data[: len(data) - hold]
        if ready:
            self.inner.write(ready)

    def close(self) -> None:
        if self._pending:
            data, self._pending = self._pending, b""
            self.inner.write(self.masker.mask_bytes(data))
        self.inner.close()
