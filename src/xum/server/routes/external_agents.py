"""External ACP agents over the API (docs/api.md): the configured ones for the new-workspace
pickers, and the checks a workspace creation makes when it names one. A settings change that
does not apply to such a workspace is refused by the host (`Hosts.change_settings`).

The list never carries a definition's command or `env`: the environment may hold the agent's
API keys, and a picker only needs a name, a label and the models."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter
from pydantic import BaseModel

from xum.core.errors import XumError
from xum.server.errors import ApiError

router = APIRouter(prefix="/api/external-agents", tags=["external-agents"])


class ExternalAgentInfo(BaseModel):
    name: str  # what a workspace's `externalAgent` names
    label: str  # what a picker shows (the name when the definition gives no label)
    models: list[str]  # the models it may be asked for; empty: its own choice


class ExternalAgentList(BaseModel):
    agents: list[ExternalAgentInfo]


def _configured() -> list[ExternalAgentInfo]:
    from xum.store.config import read_config
    from xum.workspaces.external.definitions import external_agents

    found = external_agents(read_config())
    return [
        ExternalAgentInfo(name=d.name, label=d.display, models=list(d.models))
        for d in sorted(found.values(), key=lambda d: d.name)
    ]


@router.get("", response_model=ExternalAgentList)
async def list_external_agents() -> ExternalAgentList:
    """config.json's `externalAgents`, by name; a broken entry is a 422 naming it."""
    try:
        agents = await asyncio.to_thread(_configured)
    except XumError as exc:
        raise ApiError(422, "invalid_request", exc.message, exc.hint) from None
    return ExternalAgentList(agents=agents)


async def checked_external_agent(
    name: str, *, model: str | None, thinking: str | None, agent: str | None
) -> str:
    """`name` when config.json defines it and the rest of a creation request fits an external
    agent (no model, thinking level or xum agent; every runtime runs one); 422 otherwise."""
    from xum.workspaces.external.definitions import definition_for

    refused = [
        field
        for field, value in (("model", model), ("thinking", thinking))
        if value is not None and value.strip()
    ]
    if agent is not None and agent != "exec":
        refused.append("agent")
    if refused:
        raise ApiError(
            422,
            "invalid_request",
            f"{', '.join(refused)}: not available with an external agent (it picks its own "
            "model and runs its own loop)",
            f"leave out {' and '.join(refused)}",
        )
    try:
        definition = await asyncio.to_thread(definition_for, name)
    except XumError as exc:
        raise ApiError(422, "invalid_request", f"externalAgent: {exc.message}", exc.hint) from None
    return definition.name
