"""What an editor may change in a session: the mode (exec or plan), the model and the thinking
level.

The mode is offered both as ACP session modes (`session/set_mode`) and as a config option of
category `mode`; the model and the thinking level as config options of categories `model` and
`thought_level` (`session/set_config_option`). The model list is the built-in catalog's models
of the providers that have a credential, plus the models listed in providers.jsonc, plus the
session's own model wherever it came from.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from acp.schema import (
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

from xum.llm.types import ThinkingLevel

ConfigOption = SessionConfigOptionSelect | SessionConfigOptionBoolean

MODE_OPTION, MODEL_OPTION, THINKING_OPTION = "mode", "model", "thinking"

MODES = (
    SessionMode(id="exec", name="Exec", description="Do the work: edit files and run commands."),
    SessionMode(
        id="plan",
        name="Plan",
        description="Investigate and write a plan for review; only the plan file is edited.",
    ),
)
MODE_IDS = tuple(m.id for m in MODES)

_LEVEL_NAMES: dict[str, str] = {
    "off": "Off",
    "low": "Low",
    "medium": "Medium",
    "high": "High",
    "xhigh": "Extra high",
    "max": "Max",
}


@dataclass(frozen=True, slots=True)
class ModelChoice:
    model: str  # provider:model-id
    name: str


def model_choices(current: str) -> list[ModelChoice]:
    """Models a user can switch to now. Reads providers.jsonc: call it on a worker thread."""
    from xum.engine.endpoints import configured_provider_ids
    from xum.llm import catalog
    from xum.store.providers import load_providers

    providers = load_providers()
    usable = set(configured_provider_ids(providers, os.environ))
    out = [ModelChoice(m.model_string, m.name) for m in catalog.MODELS if m.provider in usable]
    seen = {c.model for c in out}
    for provider_id, entry in providers.entries.items():
        if provider_id not in usable:
            continue
        for model_id in entry.models:
            model = f"{provider_id}:{model_id}"
            if model not in seen:
                seen.add(model)
                out.append(ModelChoice(model, model_id))
    if current not in seen:
        info = catalog.lookup_string(current)
        out.insert(0, ModelChoice(current, info.name if info else current))
    return out


def usable_aliases() -> set[str]:
    """The model aliases whose provider can be used now (has a key), as the model picker
    (`model_choices`) and the browser's picker decide. Reads providers.jsonc: call it on a worker
    thread."""
    from xum.engine.endpoints import configured_provider_ids
    from xum.llm import catalog
    from xum.store.providers import load_providers

    usable = set(configured_provider_ids(load_providers(), os.environ))
    return {
        alias for alias, model in catalog.aliases().items() if model.partition(":")[0] in usable
    }


def thinking_levels(model: str) -> tuple[ThinkingLevel, ...]:
    from xum.llm.catalog import resolve_model_string
    from xum.llm.thinking import allowed_levels

    provider, model_id = resolve_model_string(model)
    return allowed_levels(provider, model_id)


def mode_state(mode: str) -> SessionModeState:
    return SessionModeState(current_mode_id=mode, available_modes=list(MODES))


def config_options(
    mode: str, model: str, thinking: str, models: list[ModelChoice]
) -> list[ConfigOption]:
    levels = thinking_levels(model)
    return [
        SessionConfigOptionSelect(
            type="select",
            id=MODE_OPTION,
            name="Mode",
            category="mode",
            current_value=mode,
            options=[
                SessionConfigSelectOption(value=m.id, name=m.name, description=m.description)
                for m in MODES
            ],
        ),
        SessionConfigOptionSelect(
            type="select",
            id=MODEL_OPTION,
            name="Model",
            category="model",
            current_value=model,
            options=[
                SessionConfigSelectOption(value=c.model, name=c.name, description=c.model)
                for c in models
            ],
        ),
        SessionConfigOptionSelect(
            type="select",
            id=THINKING_OPTION,
            name="Thinking",
            category="thought_level",
            current_value=thinking,
            options=[
                SessionConfigSelectOption(value=level, name=_LEVEL_NAMES[level]) for level in levels
            ],
        ),
    ]
