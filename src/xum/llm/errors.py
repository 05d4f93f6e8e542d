"""Typed provider errors with messages a person can act on."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from xum.core.errors import XumError
from xum.core.paths import providers_path

ErrorKind = Literal[
    "auth",  # bad or missing key (401/403)
    "not_found",  # unknown model or endpoint (404)
    "context_length",  # the prompt does not fit the model
    "refused",  # the provider refused the request (content policy)
    "rate_limit",  # 429 that outlived the retries
    "overloaded",  # 529 / overloaded_error that outlived the retries
    "server",  # 5xx that outlived the retries
    "network",  # connection failures and dropped streams that outlived the retries
    "timeout",  # a reply that stalled or ran past its deadline (xum.llm.limits)
    "bad_request",  # any other 4xx
    "invalid_response",  # malformed frames or bodies from the provider
    "cancelled",  # the caller cancelled the stream
    "config",  # no usable provider, key or endpoint
]

RETRYABLE_KINDS: frozenset[str] = frozenset(
    {"rate_limit", "overloaded", "server", "network", "timeout"}
)


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
        retryable: bool | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.kind = kind
        self.provider = provider
        self.status = status
        self.retry_after = retry_after
        # None: decided by the kind. An explicit value wins: an exhausted quota is a 429 that
        # no retry can fix, and a server may say `x-should-retry` either way.
        self._retryable = retryable
        self.attempts = 1  # how many attempts the client made before giving up

    @property
    def retryable(self) -> bool:
        if self._retryable is not None:
            return self._retryable
        return self.kind in RETRYABLE_KINDS

    def to_dict(self) -> dict[str, str]:
        out = super().to_dict()
        out["kind"] = self.kind
        if self.provider:
            out["provider"] = self.provider
        if self.status is not None:
            out["status"] = str(self.status)
        return out


# Translating provider failures -------------------------------------------------------------

# The environment variables each built-in provider reads its key from (docs: Providers page),
# named in auth errors so the message says exactly what to set.
KEY_ENV_VARS: dict[str, str] = {
    "anthropic": "ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN",
    "openai": "OPENAI_API_KEY",
    "google": "GOOGLE_GENERATIVE_AI_API_KEY or GOOGLE_API_KEY",
    "xai": "XAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "moonshotai": "MOONSHOT_API_KEY",
    "zai": "ZAI_API_KEY",
    "github-copilot": "GITHUB_COPILOT_TOKEN",
}

# Phrases servers use for "the prompt does not fit", across Anthropic, OpenAI and the
# OpenAI-compatible servers (vLLM, llama.cpp, Ollama, OpenRouter, DeepSeek, ...). Compiled (by
# `re`'s cache) when an error is first classified, not at start-up.
_CONTEXT = (
    r"prompt is too long|context[_ ]length|context window|maximum context|too many tokens"
    r"|input is too long|input too long|exceeds the (?:model's )?(?:maximum )?context"
    r"|reduce the length of the messages|request_too_large|string too long"
)
_OVERLOADED = frozenset({"overloaded_error", "overloaded"})
_RATE = frozenset({"rate_limit_error", "rate_limit_exceeded", "rate_limit", "too_many_requests"})
_SERVER = frozenset({"api_error", "server_error", "internal_error", "internal_server_error"})
_AUTH = frozenset(
    {"authentication_error", "permission_error", "invalid_api_key", "unauthorized", "forbidden"}
)
_NOT_FOUND = frozenset({"not_found_error", "model_not_found", "not_found"})
_REFUSED = frozenset({"content_policy_violation", "content_filter"})
# Quota and billing problems come back as 429 but no retry fixes them.
_NO_RETRY = frozenset({"insufficient_quota", "billing_error", "billing_hard_limit_reached"})

MAX_DETAIL_CHARS = 400


@dataclass(frozen=True, slots=True)
class ErrorContext:
    """What an error message may name. The key itself is only here to be scrubbed out."""

    provider: str
    model: str
    base_url: str
    key_source: str | None = None
    api_key: str | None = field(default=None, repr=False)

    def scrub(self, text: str) -> str:
        text = text.strip()
        if self.api_key and len(self.api_key) >= 4:
            text = text.replace(self.api_key, "[redacted]")
        if len(text) > MAX_DETAIL_CHARS:
            text = text[:MAX_DETAIL_CHARS] + "..."
        return text


def payload_fields(payload: Any) -> tuple[set[str], str]:
    """(error type/code names, message) from an Anthropic or OpenAI style error body or event.

    Anthropic: `{"type": "error", "error": {"type": "overloaded_error", "message": ...}}`;
    OpenAI: `{"error": {"type": ..., "code": ..., "message": ...}}`; Responses stream events
    carry `code` and `message` at the top level.
    """
    codes: set[str] = set()
    message = ""
    err = payload.get("error", payload) if isinstance(payload, dict) else payload
    if isinstance(err, str):
        return codes, err
    if isinstance(err, list) and err and isinstance(err[0], dict):  # some gateways
        err = err[0].get("error", err[0])
    if isinstance(err, dict):
        for key in ("type", "code", "status"):
            value = err.get(key)
            if isinstance(value, str) and value and value != "error":
                codes.add(value.lower())
        raw = err.get("message") or err.get("detail") or ""
        message = raw if isinstance(raw, str) else str(raw)
    return codes, message


def classify(
    ctx: ErrorContext,
    *,
    status: int | None,
    codes: set[str],
    detail: str,
    retry_after: float | None = None,
    should_retry: bool | None = None,
) -> LLMError:
    """One LLMError with an actionable message from whatever the provider told us."""
    detail = ctx.scrub(detail)
    where = f"HTTP {status}" if status else "in the stream"
    said = f" ({where}: {detail})" if detail else f" ({where})"
    provider = ctx.provider
    kind: ErrorKind
    hint: str | None = None
    retryable = should_retry
    if codes & _OVERLOADED or status == 529:
        kind = "overloaded"
        message = f"{provider} is overloaded right now{said}"
        hint = "try again in a moment, or switch to another model"
    elif status in (401, 403) or codes & _AUTH:
        kind = "auth"
        retryable = False
        env = KEY_ENV_VARS.get(provider)
        where_key = f"set {env} or " if env else "set "
        if ctx.key_source:
            message = f"the {provider} key from {ctx.key_source} was rejected{said}"
        else:
            message = f"{provider} requires an API key and none was configured{said}"
        hint = (
            f'{where_key}`apiKey` (or `apiKeyFile`) under "{provider}" in '
            f"{providers_path()}; check that the key is active and allowed to use "
            f"{ctx.model}"
        )
    elif (
        (status in (400, 413, 422) or status is None)
        and not codes & _RATE
        and (
            status == 413
            or re.search(_CONTEXT, detail, re.IGNORECASE)
            or codes & {"context_length_exceeded", "request_too_large"}
        )
    ):
        kind = "context_length"
        retryable = False
        message = f"the conversation is too long for {ctx.model}{said}"
        hint = "compact the conversation or start a new one, or pick a model with a larger context window"
    elif status == 404 or codes & _NOT_FOUND:
        kind = "not_found"
        retryable = False
        message = f"{provider} does not serve the model '{ctx.model}' at {ctx.base_url}{said}"
        hint = (
            f"choose a model it serves with --model {provider}:<model-id> (or /model); "
            f"`GET {ctx.base_url}/models` lists them on most servers, and docs/models.md lists "
            "the built-in ids and aliases; also check the provider's baseUrl"
        )
    elif codes & _NO_RETRY:
        kind = "rate_limit"
        retryable = False
        message = f"{provider} refused the request for quota or billing reasons{said}"
        hint = "check the account's plan, credits and spending limits"
    elif status == 429 or codes & _RATE:
        kind = "rate_limit"
        message = f"{provider} rate limit reached{said}"
        hint = "wait a little, run fewer agents at once, or raise the account's rate limits"
    elif codes & _REFUSED:
        kind = "refused"
        retryable = False
        message = f"{provider} refused the request on content-policy grounds{said}"
    elif (status is not None and status >= 500) or codes & _SERVER:
        kind = "server"
        message = f"{provider} had a server error{said}"
        hint = "this is usually temporary; try again shortly"
    elif status == 408:
        kind = "network"
        message = f"{provider} timed out waiting for the request{said}"
    else:
        kind = "bad_request"
        message = f"{provider} rejected the request for {ctx.model}{said}"
        hint = f"check the model id, modelParameters and provider options in {providers_path()}"
    return LLMError(
        kind,
        message,
        provider=provider,
        status=status,
        retry_after=retry_after,
        hint=hint,
        retryable=retryable,
    )


def network_error(ctx: ErrorContext, what: str) -> LLMError:
    return LLMError(
        "network",
        f"the connection to {ctx.provider} at {ctx.base_url} failed: {ctx.scrub(what)}",
        provider=ctx.provider,
        # Not "retried automatically": by the time a person reads this, the retries are over.
        hint="check the network, and the provider's baseUrl in providers.jsonc (or the "
        "environment variable that sets it)",
    )


def invalid_response(ctx: ErrorContext, what: str) -> LLMError:
    return LLMError(
        "invalid_response",
        f"{ctx.provider} sent a reply xum cannot read: {ctx.scrub(what)}",
        provider=ctx.provider,
        hint="if this is a proxy or a local server, check that it speaks the configured wire format",
    )
