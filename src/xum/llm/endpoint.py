"""Where and how to reach one provider: the resolved form of a providers.jsonc entry + env."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from xum.llm.limits import ReplyLimits
from xum.llm.types import Wire

AuthStyle = Literal["x-api-key", "bearer", "none"]
_DEFAULT_LIMITS = ReplyLimits()  # immutable, so one shared default is safe


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where requests for a provider go, in which wire format, with which key."""

    provider: str  # provider id: "anthropic", "openai", "ollama", "local-vllm", ...
    wire: Wire
    base_url: str  # normalized; the wire client appends "/messages", "/responses", ...
    api_key: str | None = None
    key_source: str | None = (
        None  # where the key came from, e.g. "env:OPENAI_API_KEY"; never the value
    )
    auth_style: AuthStyle = "bearer"
    headers: dict[str, str] = field(default_factory=dict)  # extra request headers
    body_options: dict[str, Any] = field(default_factory=dict)  # extra top-level body fields
    limits: ReplyLimits = _DEFAULT_LIMITS  # timeouts, size cap, retries

    def __repr__(self) -> str:  # never print the key
        return (
            f"Endpoint(provider={self.provider!r}, wire={self.wire!r}, base_url={self.base_url!r}, "
            f"key_source={self.key_source!r})"
        )


def auth_headers(endpoint: Endpoint) -> dict[str, str]:
    """The header that carries `endpoint`'s key, as its `auth_style` says (none without a key)."""
    key = endpoint.api_key
    if not key or endpoint.auth_style == "none":
        return {}
    if endpoint.auth_style == "x-api-key":
        return {"x-api-key": key}
    return {"authorization": f"Bearer {key}"}
