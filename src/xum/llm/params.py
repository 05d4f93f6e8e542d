"""Which `modelParameters` a request carries, per wire, provider and model, and why the others
are left out.

A `"*"` wildcard in providers.jsonc is meant to be safe everywhere, so a known parameter is
sent only where the API documents it: a field an API does not have is refused by some servers
(a 400 for the whole request) and ignored by others. What is left out is reported (`Withheld`),
so the engine can tell the user once instead of dropping their setting in silence.

Sources (read 2026-12): the request types of the official SDKs (`anthropic` 2.15:
`MessageCreateParams` no longer has `temperature`, `top_p` or `top_k` at all; `openai` 3.57:
Chat Completions has `temperature`, `top_p`, `seed`, `frequency_penalty`, `presence_penalty`,
Responses `temperature` and `top_p`), Ollama's OpenAI-compatibility page (the same five as
OpenAI), OpenRouter's parameter list (adds `top_k`), and Anthropic's model notes: Claude Opus
4.8 and later models refuse sampling parameters ("`temperature` is deprecated for this
model"), extended thinking needs `temperature` 1, no `top_k` and `top_p` of 0.95 or more, and
the Claude 4.1 to 4.7 models take `temperature` or `top_p`, not both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from xum.llm.catalog import claude_version
from xum.llm.types import Wire

# Keys of `modelParameters` with a meaning xum knows. Unknown keys pass through untouched.
KNOWN_PARAMS = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "max_output_tokens",
        "seed",
        "frequency_penalty",
        "presence_penalty",
    }
)
# Body keys the encoder owns: neither params nor provider options may replace them, or a
# config typo could send a different conversation than the one the engine built.
PROTECTED_KEYS = frozenset(
    {"model", "messages", "input", "system", "instructions", "tools", "stream", "stream_options"}
)

SAMPLING_PARAMS = ("temperature", "top_p", "top_k")
_OPENAI_CHAT = frozenset({"temperature", "top_p", "seed", "frequency_penalty", "presence_penalty"})
_WITH_TOP_K = _OPENAI_CHAT | {"top_k"}
# Chat Completions: what each built-in provider's API documents. A provider not listed is a
# custom server (vLLM, llama.cpp, LM Studio, ...): those take `top_k` as well.
_CHAT_BY_PROVIDER: dict[str, frozenset[str]] = {
    "openai": _OPENAI_CHAT,
    "ollama": _OPENAI_CHAT,
    "openrouter": _WITH_TOP_K,
    "google": _OPENAI_CHAT,
    "xai": _OPENAI_CHAT,
    "deepseek": _OPENAI_CHAT,
    "moonshotai": _OPENAI_CHAT,
    "zai": _OPENAI_CHAT,
}
_BY_WIRE: dict[Wire, frozenset[str]] = {
    "anthropic": frozenset(SAMPLING_PARAMS),
    "openai-responses": frozenset({"temperature", "top_p"}),
    "openai-chat": _WITH_TOP_K,
}
_API_NAME: dict[Wire, str] = {
    "anthropic": "the Anthropic Messages API",
    "openai-responses": "the OpenAI Responses API",
    "openai-chat": "Chat Completions",
}


class Withheld(NamedTuple):
    """A configured parameter that is not sent, and why."""

    key: str
    reason: str

    def describe(self) -> str:
        return f"{self.key} ({self.reason})"


def withheld_params(
    wire: Wire, provider: str, model: str, params: Mapping[str, Any], *, thinking: bool
) -> list[Withheld]:
    """The known parameters of `params` that this request leaves out. `thinking`: the request
    turns the model's thinking on (it matters on the Anthropic wire)."""
    out: list[Withheld] = []
    accepted = _BY_WIRE[wire]
    if wire == "openai-chat":
        accepted = _CHAT_BY_PROVIDER.get(provider, accepted)
    where = f"{provider}'s Chat Completions API" if wire == "openai-chat" else _API_NAME[wire]
    for key, value in params.items():
        sendable = key in KNOWN_PARAMS and key != "max_output_tokens" and value is not None
        if sendable and key not in accepted:
            out.append(Withheld(key, f"{where} has no such parameter"))
    if wire == "anthropic":
        out += _claude_rules(model, params, thinking=thinking, skip={w.key for w in out})
    return out


def _claude_rules(
    model: str, params: Mapping[str, Any], *, thinking: bool, skip: set[str]
) -> list[Withheld]:
    version = claude_version(model)
    newest = (version is not None and version >= (4, 8)) or model.startswith("claude-mythos")
    given = [k for k in SAMPLING_PARAMS if params.get(k) is not None and k not in skip]
    if newest:
        return [Withheld(k, f"{model} does not accept sampling parameters") for k in given]
    if version is None:
        return []  # not a Claude id: an Anthropic-compatible server for another model
    out: list[Withheld] = []
    if thinking:
        temperature = params.get("temperature")
        if "temperature" in given and temperature != 1:
            out.append(Withheld("temperature", "extended thinking requires temperature 1"))
        if "top_k" in given:
            out.append(Withheld("top_k", "extended thinking does not allow top_k"))
        top_p = params.get("top_p")
        if "top_p" in given and not (isinstance(top_p, int | float) and top_p >= 0.95):
            out.append(Withheld("top_p", "extended thinking allows top_p only from 0.95 to 1"))
    kept = {k for k in given if k not in {w.key for w in out}}
    if (4, 1) <= version < (4, 8) and {"temperature", "top_p"} <= kept:
        out.append(Withheld("top_p", f"{model} takes temperature or top_p, not both"))
    return out


def apply_params(
    body: dict[str, Any],
    params: Mapping[str, Any],
    withheld: list[Withheld],
    options: Mapping[str, Any],
) -> None:
    """Add `modelParameters` (less `withheld`) and the endpoint's extra body options to `body`.

    Unknown keys pass through. `max_output_tokens` is handled by the encoder (it interacts
    with thinking) and skipped here. Provider options go last and win.
    """
    left_out = {w.key for w in withheld}
    for key, value in params.items():
        if key == "max_output_tokens" or key in PROTECTED_KEYS or value is None:
            continue
        if key not in left_out:
            body[key] = value
    for key, value in options.items():
        if key not in PROTECTED_KEYS:
            body[key] = value
