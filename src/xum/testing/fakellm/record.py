"""What the server remembers about each request, for tests to assert on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from xum.testing.fakellm.cache import CacheUsage
from xum.testing.fakellm.script import Reply, Wire
from xum.testing.fakellm.wires.gemini import parse_path

ReplySource = Literal["queue", "responder", "default", "none"]


@dataclass(slots=True)
class RecordedRequest:
    index: int  # 0-based arrival order on this server (since the last reset)
    method: str
    path: str  # without the query string
    query: str
    headers: dict[str, str]  # lowercased names; repeated headers joined with ", "
    body: bytes
    json: Any  # the parsed body, or None when it is not JSON
    wire: Wire | None  # None for paths that are not a model endpoint
    arrived: float  # time.monotonic() when the request was fully read
    finished: float | None = None  # time.monotonic() when the whole reply was written
    status: int = 0  # the status the server answered (0: connection closed before headers)
    reply: Reply | None = None
    reply_source: ReplySource = "none"
    cache: CacheUsage | None = None  # None when no prompt was processed (errors, GET)
    error: str | None = None  # the server's own complaint (no reply left, wire mismatch, 400)
    notes: list[str] = field(default_factory=list)  # e.g. content the request did not enable
    target: str = ""  # the request line's target as sent: absolute (`http://...`) via a proxy

    @property
    def stream(self) -> bool:
        gemini = parse_path(self.path) if self.wire == "gemini" else None
        if gemini is not None:  # Gemini streams by method, not by a body field
            return gemini[1]
        return isinstance(self.json, dict) and self.json.get("stream") is True

    @property
    def model(self) -> str | None:
        gemini = parse_path(self.path) if self.wire == "gemini" else None
        if gemini is not None:  # Gemini names the model in the path
            return gemini[0]
        m = self.json.get("model") if isinstance(self.json, dict) else None
        return m if isinstance(m, str) else None
