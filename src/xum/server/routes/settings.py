"""Settings: providers (keys are write-only), their custom models, model suggestions and the
default model.

Provider changes edit `providers.jsonc` in place (see `xum.server.jsonc_edit`): the user's
comments, layout and every other key survive; a file that does not parse is refused untouched.
The default model is config.json's `defaultModel`, written under config.json's lock.
Suggestions come from the provider's own model list (`xum.llm.discovery`) and never add anything.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from xum.core.errors import ConfigError
from xum.core.paths import providers_path
from xum.server.config_edit import edit_config_file
from xum.server.errors import ApiError, not_found
from xum.server.state import get_state

router = APIRouter(prefix="/api/settings", tags=["settings"])


class ProviderRow(BaseModel):
    id: str
    displayName: str
    custom: bool
    configured: bool
    usable: bool
    credentialSource: str | None
    baseUrl: str | None
    problem: str | None
    models: list[str]  # the provider's `models` in providers.jsonc, in file order


class ProviderList(BaseModel):
    providers: list[ProviderRow]
    path: str


class KeyBody(BaseModel):
    apiKey: str = Field(min_length=1, max_length=8192)


class BaseUrlBody(BaseModel):
    baseUrl: str | None = Field(default=None, max_length=2048)


class ModelIdBody(BaseModel):
    id: str = Field(min_length=1, max_length=1024)


class ModelEdit(BaseModel):
    provider: ProviderRow
    changed: bool  # False: nothing to do (already there); `message` says why
    message: str | None


class CatalogModel(BaseModel):
    id: str
    displayName: str | None


class CatalogList(BaseModel):
    provider: str
    models: list[CatalogModel]
    error: str | None  # why listing failed; ids can still be entered by hand
    truncated: bool
    cached: bool


class DefaultModelBody(BaseModel):
    model: str | None = Field(default=None, max_length=1024)


class ModelRow(BaseModel):
    model: str
    provider: str
    id: str
    displayName: str
    contextWindow: int | None
    priced: bool
    usable: bool
    thinkingLevels: list[str]  # the levels the model accepts, lowest first


class ModelList(BaseModel):
    defaultModel: str | None
    configuredDefaultModel: str | None  # config.json `defaultModel`; None: chosen automatically
    aliases: dict[str, str]
    models: list[ModelRow]


def provider_rows() -> list[ProviderRow]:
    from xum.engine.endpoints import find_credential, missing_key_hint, needs_key, resolve_endpoint
    from xum.store.providers import load_providers

    config = load_providers()
    rows = []
    for pid in config.all_ids():
        entry = config.get(pid)
        assert entry is not None
        name = entry.display_name or (entry.builtin.display_name if entry.builtin else pid)
        problem: str | None = None
        source: str | None = None
        usable = False
        try:
            credential = find_credential(entry, os.environ)
            source = credential.source
            if credential.value is not None:
                usable = True
            elif not needs_key(entry):
                usable = pid in config.entries
                source = "none needed" if usable else None
                if not usable:
                    problem = f'not set up: add "{pid}" to providers.jsonc (no key needed)'
            else:
                problem = missing_key_hint(entry)
        except ConfigError as exc:
            problem = exc.message
        base_url: str | None = None
        try:
            base_url = resolve_endpoint(pid, config, os.environ).base_url if usable else None
        except Exception:
            base_url = entry.base_url
        rows.append(
            ProviderRow(
                id=pid,
                displayName=name,
                custom=entry.is_custom,
                configured=pid in config.entries,
                usable=usable,
                credentialSource=source,
                baseUrl=base_url or entry.base_url,
                problem=problem,
                models=list(entry.models),
            )
        )
    return rows


def _row(provider_id: str) -> ProviderRow:
    for row in provider_rows():
        if row.id == provider_id:
            return row
    raise not_found(f"no provider '{provider_id}'")


def _known_provider(provider_id: str) -> None:
    from xum.store.providers import BUILTIN_PROVIDERS, load_providers

    if provider_id in BUILTIN_PROVIDERS:
        return
    if provider_id not in load_providers().entries:
        raise not_found(
            f"no provider '{provider_id[:60]}'",
            "built-in providers are listed by GET /api/settings/providers; add a custom one "
            "to providers.jsonc by hand",
        )


def edit_providers(path_in_file: list[str], value: Any, *, delete: bool = False) -> None:
    """Change one value of providers.jsonc in place, under the providers lock."""
    change_providers(
        lambda document: (
            document.delete(path_in_file) if delete else document.set(path_in_file, value)
        )
    )


def change_providers(edit: Callable[[Any], str]) -> bool:
    """Apply `edit(JsoncDocument) -> new text` to providers.jsonc under the providers lock;
    False when the text stays the same. The result must read back as a valid providers file."""
    path = providers_path()

    def check(new_text: str) -> None:
        from xum.core.jsonc import parse_jsonc
        from xum.store.providers import parse_providers

        parse_providers(parse_jsonc(new_text, path=str(path)), str(path))

    return edit_config_file(path, edit, check, purpose="providers write")


async def _after_change(request: Request) -> None:
    from xum.llm import discovery

    discovery.clear_cache()
    state = get_state(request)
    await state.hosts.mark_all_stale()


@router.get("/providers", response_model=ProviderList)
async def providers() -> ProviderList:
    rows = await asyncio.to_thread(provider_rows)
    return ProviderList(providers=rows, path=str(providers_path()))


@router.put("/providers/{provider_id}/key", response_model=ProviderRow)
async def set_key(provider_id: str, body: KeyBody, request: Request) -> ProviderRow:
    _known_provider(provider_id)
    key = body.apiKey.strip()
    if not key or any(c in key for c in "\r\n\0"):
        raise ApiError(422, "invalid_request", "apiKey: must be one line of text")
    await asyncio.to_thread(edit_providers, [provider_id, "apiKey"], key)
    await _after_change(request)
    return await asyncio.to_thread(_row, provider_id)


@router.delete("/providers/{provider_id}/key", response_model=ProviderRow)
async def clear_key(provider_id: str, request: Request) -> ProviderRow:
    _known_provider(provider_id)
    await asyncio.to_thread(edit_providers, [provider_id, "apiKey"], None, delete=True)
    await _after_change(request)
    return await asyncio.to_thread(_row, provider_id)


@router.put("/providers/{provider_id}/base-url", response_model=ProviderRow)
async def set_base_url(provider_id: str, body: BaseUrlBody, request: Request) -> ProviderRow:
    from xum.store.providers import BUILTIN_PROVIDERS, normalize_builtin_base_url

    _known_provider(provider_id)
    url = (body.baseUrl or "").strip()
    if not url:
        if provider_id not in BUILTIN_PROVIDERS:
            raise ApiError(422, "invalid_request", "baseUrl: a custom provider needs one")
        await asyncio.to_thread(edit_providers, [provider_id, "baseUrl"], None, delete=True)
    else:
        builtin = BUILTIN_PROVIDERS.get(provider_id)
        if builtin is not None:
            try:
                normalize_builtin_base_url(builtin, url, where="baseUrl", path="request")
            except ConfigError as exc:
                raise ApiError(
                    422, "invalid_request", exc.message.removeprefix("request: ")
                ) from None
        await asyncio.to_thread(edit_providers, [provider_id, "baseUrl"], url)
    await _after_change(request)
    return await asyncio.to_thread(_row, provider_id)


def model_rows() -> ModelList:
    from xum.engine.endpoints import configured_provider_ids
    from xum.engine.route import default_model_string
    from xum.llm import catalog
    from xum.llm.pricing import parse_user_prices, price_for
    from xum.llm.thinking import allowed_levels
    from xum.store.config import load_config
    from xum.store.providers import load_providers

    providers = load_providers()
    config = load_config()
    usable = set(configured_provider_ids(providers, os.environ))
    try:
        raw_prices = config.get("modelPrices") or {}
        prices = parse_user_prices(raw_prices) if isinstance(raw_prices, dict) else {}
    except ValueError:
        prices = {}
    try:
        default: str | None = default_model_string(providers, config, os.environ)
    except Exception:
        default = None
    chosen = config.get("defaultModel")
    configured_default = chosen.strip() if isinstance(chosen, str) and chosen.strip() else None
    rows: list[ModelRow] = []
    seen: set[str] = set()
    for info in catalog.MODELS:
        seen.add(info.model_string)
        rows.append(
            ModelRow(
                model=info.model_string,
                provider=info.provider,
                id=info.id,
                displayName=info.name,
                contextWindow=info.context_window,
                priced=price_for(info.model_string, prices) is not None,
                usable=info.provider in usable,
                thinkingLevels=list(allowed_levels(info.provider, info.id)),
            )
        )
    for pid, entry in providers.entries.items():
        for model_id in entry.models:
            model = f"{pid}:{model_id}"
            if model in seen:
                continue
            seen.add(model)
            rows.append(
                ModelRow(
                    model=model,
                    provider=pid,
                    id=model_id,
                    displayName=model_id,
                    contextWindow=None,
                    priced=price_for(model, prices) is not None,
                    usable=pid in usable,
                    thinkingLevels=list(allowed_levels(pid, model_id)),
                )
            )
    return ModelList(
        defaultModel=default,
        configuredDefaultModel=configured_default,
        aliases=catalog.aliases(),
        models=rows,
    )


@router.get("/models", response_model=ModelList)
async def models() -> ModelList:
    return await asyncio.to_thread(model_rows)


# ---- Custom models -------------------------------------------------------------------------


def _checked_model_id(raw: str) -> str:
    from xum.llm.discovery import model_id_problem

    model_id = raw.strip()
    problem = model_id_problem(model_id)
    if problem:
        raise ApiError(422, "invalid_request", f"id: {problem}")
    return model_id


def _add_model(provider_id: str, model_id: str) -> tuple[bool, str | None]:
    from xum.llm import catalog

    if catalog.lookup(provider_id, model_id) is not None:
        return False, f"{provider_id}:{model_id} is built in: it is already in the model picker"
    outcome: dict[str, str] = {}

    def edit(document: Any) -> str:
        current = document.get([provider_id, "models"])
        if isinstance(current, list) and model_id in current:
            outcome["message"] = f"{provider_id}:{model_id} is already configured"
            return str(document.text)
        return str(document.append([provider_id, "models"], model_id))

    changed = change_providers(edit)
    return changed, outcome.get("message")


def _remove_model(provider_id: str, model_id: str) -> bool:
    def edit(document: Any) -> str:
        current = document.get([provider_id, "models"])
        if not isinstance(current, list) or model_id not in current:
            raise not_found(
                f"'{model_id[:80]}' is not among {provider_id}'s configured models",
                "GET /api/settings/providers lists each provider's models",
            )
        return str(document.remove_item([provider_id, "models"], model_id))

    return change_providers(edit)


@router.post("/providers/{provider_id}/models", response_model=ModelEdit)
async def add_model(provider_id: str, body: ModelIdBody) -> ModelEdit:
    # Only the picker's list changes: no route does, so live sessions stay open.
    _known_provider(provider_id)
    model_id = _checked_model_id(body.id)
    changed, message = await asyncio.to_thread(_add_model, provider_id, model_id)
    row = await asyncio.to_thread(_row, provider_id)
    return ModelEdit(provider=row, changed=changed, message=message)


@router.delete("/providers/{provider_id}/models", response_model=ModelEdit)
async def remove_model(
    provider_id: str, id: str = Query(min_length=1, max_length=1024)
) -> ModelEdit:
    _known_provider(provider_id)
    model_id = _checked_model_id(id)
    changed = await asyncio.to_thread(_remove_model, provider_id, model_id)
    row = await asyncio.to_thread(_row, provider_id)
    return ModelEdit(provider=row, changed=changed, message=None)


@router.get("/providers/{provider_id}/catalog", response_model=CatalogList)
async def provider_catalog(provider_id: str, refresh: bool = False) -> CatalogList:
    """Suggestions from the provider's model list; a failure is an answer with `error` set."""
    from xum.engine.endpoints import resolve_endpoint
    from xum.llm import discovery
    from xum.llm.errors import LLMError
    from xum.store.providers import load_providers

    _known_provider(provider_id)
    config = await asyncio.to_thread(load_providers)
    try:
        endpoint = resolve_endpoint(provider_id, config, os.environ)
    except (LLMError, ConfigError) as exc:
        reason = f"{exc.message} ({exc.hint})" if exc.hint else exc.message
        return CatalogList(
            provider=provider_id, models=[], error=reason, truncated=False, cached=False
        )
    try:
        listing = await discovery.list_models(endpoint, refresh=refresh)
    except discovery.ListingError as exc:
        return CatalogList(
            provider=provider_id, models=[], error=exc.message, truncated=False, cached=False
        )
    return CatalogList(
        provider=provider_id,
        models=[CatalogModel(id=m.id, displayName=m.display_name) for m in listing.models],
        error=None,
        truncated=listing.truncated,
        cached=listing.cached,
    )


# ---- Default model -------------------------------------------------------------------------


def _set_default_model(text: str | None) -> None:
    from xum.llm.discovery import model_id_problem
    from xum.server.routes.workspaces import checked_model
    from xum.store.config import update_config
    from xum.store.providers import load_providers

    value = checked_model(text)
    if value is not None:
        provider, _, model_id = value.partition(":")
        known = load_providers().all_ids()
        if provider not in known:
            raise ApiError(
                422,
                "invalid_request",
                f"model: unknown provider '{provider[:60]}'",
                f"use one of: {', '.join(known)}; or add a custom provider to providers.jsonc",
            )
        problem = model_id_problem(model_id)
        if problem:
            raise ApiError(422, "invalid_request", f"model: {problem}")

    def mutate(config: dict[str, Any]) -> None:
        if value is None:
            config.pop("defaultModel", None)
        else:
            config["defaultModel"] = value

    update_config(mutate)


@router.put("/default-model", response_model=ModelList)
async def set_default_model(body: DefaultModelBody, request: Request) -> ModelList:
    """config.json `defaultModel`: what `xum run` and new workspaces use without a model of
    their own. null (or blank) removes it, so the automatic choice applies again."""
    await asyncio.to_thread(_set_default_model, body.model)
    await _after_change(request)
    return await asyncio.to_thread(model_rows)
