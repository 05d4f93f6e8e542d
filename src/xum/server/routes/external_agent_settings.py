"""Settings → External agents (docs/external-agents.md, docs/api.md): the external ACP agents
config.json's `externalAgents` defines, read-only. They are edited in that file only.

What a definition's `env` holds (the agent's own API key, say) is never returned: only the
names of its variables, so that a person can see which ones are set. Neither are its `args`,
which may carry a key too. A broken section is not an error of the request: the answer says
what is wrong, as the pickers' list would refuse it."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter
from pydantic import BaseModel

from xum.core.errors import XumError

router = APIRouter(prefix="/api/settings/external-agents", tags=["settings"])


class ExternalAgentSetting(BaseModel):
    name: str  # what a workspace's `externalAgent` names
    label: str  # the name when the definition gives no label
    command: str  # the program, as written (a name on PATH or an absolute path)
    models: list[str]
    envNames: list[str]  # the names of the variables its `env` sets (never their values)


class ExternalAgentSettings(BaseModel):
    configFile: str  # where they are defined
    agents: list[ExternalAgentSetting]
    problem: str | None = None  # why the section cannot be read (then `agents` is empty)


def _read() -> ExternalAgentSettings:
    from xum.core.paths import config_path
    from xum.store.config import read_config
    from xum.workspaces.external.definitions import external_agents

    where = str(config_path())
    try:
        found = external_agents(read_config())
    except XumError as exc:
        problem = exc.message + (f" ({exc.hint})" if exc.hint else "")
        return ExternalAgentSettings(configFile=where, agents=[], problem=problem)
    agents = [
        ExternalAgentSetting(
            name=d.name,
            label=d.display,
            command=d.command,
            models=list(d.models),
            envNames=sorted(d.env),
        )
        for d in sorted(found.values(), key=lambda d: d.name)
    ]
    return ExternalAgentSettings(configFile=where, agents=agents)


@router.get("", response_model=ExternalAgentSettings)
async def external_agent_settings() -> ExternalAgentSettings:
    return await asyncio.to_thread(_read)
