"""Typed provider errors with messages a person can act on."""

from __future__ import annotations

from typing import Literal

from xum.core.errors import XumError

ErrorKind = Literal[
    "auth",  # bad or missing key (401/403)
    "not_found",  # unknown model or endpoint (404)
    "context_length",  # the prompt does not fit the model
    "refused",  # the provider refused the request (content policy)
    "rate_limit",  # 429 that outlived the retries
    "overloaded",  # 529 / overloaded_error that outlived the retries
    "server",  # 5xx that outlived the retries
    "network",  # connection failures and dropped streams that outlived the retries
    "bad_request",  # any other 4xx
    "invalid_response",  # malformed frames or bodies from the provider
    "cancelled",  # the caller cancelled the stream
    "config",  # no usable provider, key or endpoint
]

RETRYABLE_KINDS: frozenset[str] = frozenset({"rate_limit", "overloaded", "server", "network"})


class LLMError(XumError):
    code = "llm_error"

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        provider: str = "",
        status: int | None = None,
        retry_after: float | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.kind = kind
        self.provider = provider
        self.status = status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE_KINDS

    def to_dict(self) -> dict[str, str]:
        out = super().to_dict()
        out["kind"] = self.kind
        if self.provider:
            out["provider"] = self.provider
        if self.status is not None:
            out["status"] = str(self.status)
        return out
