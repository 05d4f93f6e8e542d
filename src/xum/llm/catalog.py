"""The built-in model table, aliases and model strings (`provider:model-id`).

The table is a convenience, not a gate: any id a provider serves is accepted and simply has no
alias, no price and the default limits. Ids and aliases follow the Models page of the docs
exactly. Figures the docs do not give (context windows, output limits, thinking ranges beyond
those stated) are marked as assumptions where they are set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from xum.llm.errors import LLMError
from xum.llm.types import ThinkingLevel

# How a chat-completions request carries a thinking level for this model:
#   "openai"   - `reasoning_effort` with OpenAI's values (none/low/medium/high/xhigh)
#   "basic"    - `reasoning_effort` with low/medium/high only (Gemini's OpenAI-compatible API)
#   "disabled" - always `reasoning_effort: "none"` (the route only allows tools without reasoning)
#   None       - nothing is sent; the server decides (most compatible servers)
ChatReasoning = Literal["openai", "basic", "disabled"] | None


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What xum knows about one model: ids, aliases, thinking range, limits."""

    provider: str
    id: str
    name: str
    aliases: tuple[str, ...] = ()
    thinking_min: ThinkingLevel = "off"
    thinking_max: ThinkingLevel = "high"
    context_window: int | None = None  # tokens; None = not known for this id
    max_output_tokens: int | None = None  # the default output limit; None = not known
    chat_reasoning: ChatReasoning = None

    @property
    def model_string(self) -> str:
        return f"{self.provider}:{self.id}"


# Limits from the providers' model pages (read 2026-11): every Claude 5.x model here has a 1M
# context window and 128K max output (platform.claude.com/docs/en/models/<model>/overview);
# the GPT-6 models have 1,050,000 / 128K (developers.openai.com/api/docs/models/<model>).
# Claude 5.x thinking is adaptive (`thinking.type: "adaptive"` + `output_config.effort`);
# Opus 5.5, Fable 5.1 and Mythos 5.1 cannot turn it off, Sonnet and Haiku 5.5 can.
_1M = 1_000_000
_GPT6_WINDOW = 1_050_000
_128K = 128_000

MODELS: tuple[ModelInfo, ...] = (
    ModelInfo("anthropic", "claude-fable-5-1", "Fable 5.1", ("fable",), "low", "max",
              _1M, _128K),
    ModelInfo("anthropic", "claude-mythos-5-1", "Mythos 5.1", ("mythos",), "low", "max",
              _1M, _128K),
    ModelInfo("anthropic", "claude-opus-5-5", "Opus 5.5", ("opus",), "low", "max", _1M, _128K),
    ModelInfo("anthropic", "claude-sonnet-5-5", "Sonnet 5.5", ("sonnet",), "off", "max",
              _1M, _128K),
    ModelInfo("anthropic", "claude-haiku-5-5", "Haiku 5.5", ("haiku",), "off", "max", _1M, _128K),
    # OpenAI: Sol and Astra cannot turn reasoning off; Luna can, and on the chat-completions
    # route its reasoning is always disabled because tools there need reasoning off.
    ModelInfo("openai", "gpt-6.1-sol", "GPT-6.1 Sol", ("gpt", "sol"), "low", "max",
              _GPT6_WINDOW, _128K, chat_reasoning="openai"),
    ModelInfo("openai", "gpt-6-luna", "GPT-6 Luna", ("luna",), "off", "max",
              _GPT6_WINDOW, _128K, chat_reasoning="disabled"),
    ModelInfo("openai", "gpt-6-astra", "GPT-6 Astra", ("astra", "gpt-6-astra"), "low", "max",
              _GPT6_WINDOW, _128K, chat_reasoning="openai"),
    # Gemini through its OpenAI-compatible endpoint. Assumed (no first-party page at hand): Pro
    # cannot turn thinking off, Flash can, and neither has levels above high.
    ModelInfo("google", "gemini-3.1-pro-preview", "Gemini 3.1 Pro Preview",
              ("gemini", "gemini-pro"), "low", "high", chat_reasoning="basic"),
    ModelInfo("google", "gemini-3.8-flash", "Gemini 3.8 Flash", ("gemini-flash",), "off", "high",
              chat_reasoning="basic"),
    ModelInfo("xai", "grok-4.7", "Grok 4.7", ("grok", "grok-4.7")),
    ModelInfo("deepseek", "deepseek-v4-pro", "DeepSeek V4 Pro",
              ("deepseek", "deepseek-pro", "deepseek-v4", "deepseek-v4-pro")),
    ModelInfo("deepseek", "deepseek-v4-flash", "DeepSeek V4 Flash",
              ("deepseek-flash", "deepseek-v4-flash")),
    ModelInfo("moonshotai", "kimi-k3", "Kimi K3", ("kimi", "k3", "kimi-k3")),
    ModelInfo("zai", "glm-5.3-flash", "GLM 5.3 Flash", ("glm", "glm-flash", "glm-5.3-flash")),
)  # fmt: skip

DEFAULT_MODEL = "anthropic:claude-opus-5-5"

# New installs start with these refusal fallback chains (docs: Models, "Model fallbacks").
DEFAULT_MODEL_FALLBACKS: dict[str, tuple[str, ...]] = {
    "anthropic:claude-fable-5-1": ("anthropic:claude-opus-5",),
    "anthropic:claude-sonnet-5-5": ("anthropic:claude-sonnet-5",),
}

# Used when a model id is not in the table (or the table does not know the figure). These are
# assumptions about each provider's current generation, chosen on the small side so that
# compaction starts early rather than too late.
PROVIDER_CONTEXT_WINDOW: dict[str, int] = {
    "anthropic": 200_000,
    "openai": 272_000,
    "google": 1_000_000,
    "xai": 256_000,
    "deepseek": 128_000,
    "moonshotai": 256_000,
    "zai": 128_000,
}
DEFAULT_CONTEXT_WINDOW = 128_000
# Anthropic requires `max_tokens`; 32k is within the limit of every Claude model since Claude 4.
PROVIDER_MAX_OUTPUT: dict[str, int] = {"anthropic": 32_000}

# Claude models from 4.6 on take adaptive thinking; earlier ones (and Anthropic-compatible
# servers for other models) take a fixed `budget_tokens`.
_CLAUDE_VERSION_RE = re.compile(
    r"^claude-(?:opus|sonnet|haiku|fable|mythos)-(\d+)(?:-(\d{1,2}))?(?:-|$)"
)


def claude_version(model: str) -> tuple[int, int] | None:
    """`(major, minor)` of a Claude model id (`claude-opus-4-8` -> (4, 8)), None for an id
    without one (`claude-mythos-preview`) or a model that is not Claude."""
    match = _CLAUDE_VERSION_RE.match(model)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2) or 0)


def anthropic_thinking_style(model: str) -> Literal["adaptive", "budget"]:
    version = claude_version(model)
    if version is None:
        return "adaptive" if model.startswith("claude-mythos") else "budget"
    return "adaptive" if version >= (4, 6) else "budget"


_BY_STRING: dict[str, ModelInfo] = {m.model_string: m for m in MODELS}
_BY_ID: dict[str, ModelInfo] = {m.id: m for m in MODELS}
_ALIASES: dict[str, ModelInfo] = {alias: m for m in MODELS for alias in m.aliases}
_PROVIDER_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def lookup(provider: str, model: str) -> ModelInfo | None:
    """The table entry for `provider:model`, or None for a model the table does not know."""
    return _BY_STRING.get(f"{provider}:{model}")


def lookup_string(model_string: str) -> ModelInfo | None:
    return _BY_STRING.get(model_string)


def aliases() -> dict[str, str]:
    """alias -> model string, in table order."""
    return {alias: m.model_string for alias, m in _ALIASES.items()}


def context_window(provider: str, model: str) -> int:
    info = lookup(provider, model)
    if info and info.context_window:
        return info.context_window
    return PROVIDER_CONTEXT_WINDOW.get(provider, DEFAULT_CONTEXT_WINDOW)


def default_max_output_tokens(provider: str, model: str) -> int | None:
    """The output limit to ask for when nothing else sets one (None: leave it to the server)."""
    info = lookup(provider, model)
    if info and info.max_output_tokens:
        return info.max_output_tokens
    return PROVIDER_MAX_OUTPUT.get(provider)


def resolve_model_string(text: str) -> tuple[str, str]:
    """`(provider, model_id)` from an alias (`opus`), a model string (`anthropic:claude-opus-5-5`,
    any id the provider serves) or a bare built-in id (`claude-opus-5-5`)."""
    raw = text.strip()
    if ":" in raw:
        provider, _, model = raw.partition(":")
        provider = provider.strip()
        model = model.strip()
        if not _PROVIDER_RE.match(provider) or not model:
            raise LLMError(
                "config",
                f"'{text}' is not a model string",
                hint="write provider:model-id, e.g. anthropic:claude-opus-5-5, or an alias like opus",
            )
        return provider, model
    key = raw.lower()
    found = _ALIASES.get(key) or _BY_ID.get(raw) or _BY_ID.get(key)
    if found is not None:
        return found.provider, found.id
    names = sorted(set(_ALIASES) | set(_BY_ID))
    import difflib  # only to suggest names for a typo

    near = difflib.get_close_matches(key, names, n=4, cutoff=0.5)
    nearby = f"; did you mean {', '.join(near)}?" if near else ""
    raise LLMError(
        "config",
        f"unknown model '{raw}'{nearby}",
        hint="use an alias (" + ", ".join(sorted(_ALIASES)[:8]) + ", ...) or any model a "
        "provider serves as provider:model-id (docs/models.md lists them all)",
    )


# Image input, per model family (an assumption where a provider's page was not at hand): Claude,
# GPT (4o and later) and OpenAI's o-series, Gemini and Grok 4 read images; the other built-in
# families (DeepSeek, Kimi, GLM) and any model of an unknown provider are treated as text-only,
# so an image is refused before the request instead of failing at the provider. `imageInput`
# in config.json overrides this per model (xum.engine.images).
_IMAGE_FAMILIES: dict[str, tuple[str, ...]] = {
    "anthropic": ("claude-",),
    "openai": ("gpt-4o", "gpt-4.1", "gpt-5", "gpt-6", "o3", "o4"),
    "google": ("gemini-",),
    "xai": ("grok-4",),
}


def takes_images(provider: str, model: str) -> bool:
    """Whether `provider:model` is known to take image input."""
    return model.startswith(_IMAGE_FAMILIES.get(provider, ()))
