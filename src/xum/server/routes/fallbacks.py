"""Settings → Models → Model Fallbacks: config.json `modelFallbacks` (docs/models.md).

The chains are read and checked with the parser the sessions use (`xum.engine.fallback_config`),
so what is stored is what a session accepts; a session reads the file again at its next refusal,
so a change needs no restart. Removing the chains (null) brings the built-in ones back.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from xum.core.errors import ConfigError
from xum.server.errors import ApiError

router = APIRouter(prefix="/api/settings/model-fallbacks", tags=["settings"])


class Chain(BaseModel):
    model: str = Field(min_length=1, max_length=300)  # the model that refuses
    models: list[str] = Field(max_length=16)  # the models to try after it, in order


class FallbackSettings(BaseModel):
    chains: list[Chain]  # as `provider:model-id`
    builtIn: bool  # config.json has no `modelFallbacks`: the built-in chains apply
    error: str | None  # the key is there but cannot be used: what is wrong (chains is empty)


class FallbackEdit(BaseModel):
    chains: list[Chain] | None = Field(max_length=64)  # None: remove the key


def _read() -> FallbackSettings:
    from xum.engine.fallback_config import CONFIG_KEY, model_fallbacks
    from xum.store.config import load_config

    config = load_config()
    try:
        chains = model_fallbacks(config)
    except ConfigError as exc:
        return FallbackSettings(chains=[], builtIn=False, error=exc.message)
    return FallbackSettings(
        chains=[Chain(model=k, models=list(v)) for k, v in chains.items()],
        builtIn=config.get(CONFIG_KEY) is None,
        error=None,
    )


def _write(edit: FallbackEdit) -> None:
    from xum.engine.fallback_config import CONFIG_KEY, model_fallbacks
    from xum.store.config import update_config

    value: dict[str, Any] | None = None
    if edit.chains is not None:
        value = {}
        for chain in edit.chains:
            model = chain.model.strip()
            if model in value:
                raise ApiError(422, "invalid_request", f"{model}: two chains for one model")
            value[model] = {"models": [m.strip() for m in chain.models if m.strip()]}
        try:  # the sessions' own parser: a chain it would refuse is not written
            model_fallbacks({CONFIG_KEY: value})
        except ConfigError as exc:
            raise ApiError(422, "invalid_request", exc.message, exc.hint) from None

    def mutate(config: dict[str, Any]) -> None:
        if value is None:
            config.pop(CONFIG_KEY, None)
        else:
            config[CONFIG_KEY] = value

    update_config(mutate)


@router.get("", response_model=FallbackSettings)
async def fallbacks() -> FallbackSettings:
    return await asyncio.to_thread(_read)


@router.put("", response_model=FallbackSettings)
async def set_fallbacks(edit: FallbackEdit) -> FallbackSettings:
    """Replace every chain (`chains`), or remove the key (`null`: the built-in chains apply)."""
    await asyncio.to_thread(_write, edit)
    return await asyncio.to_thread(_read)
