"""Opening the session of a workspace whose agent is an external ACP agent.

The assembly (`open_workspace_session`) hands a workspace whose record names an
`external_agent` here. It gets the same runtime, log, sandbox wiring and approver as xum's own
agent would; in place of the engine's `AgentSession`, an `ExternalAgent`. No model route and no
LLM client: the external agent talks to its own models.

The agent's environment is xum's own less xum's secrets (provider keys, the server token: the
scrubbing every child of xum gets, `xum.core.ownsecrets`) plus the definition's `env`. The
project's secrets go to the commands it runs through xum's terminals, as they go to xum's bash.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import TYPE_CHECKING

from xum.core.ownsecrets import without_own_secrets
from xum.engine.events import EventSink, null_sink
from xum.runtime.base import Runtime
from xum.store.registry import WorkspaceRecord
from xum.store.writerlog import WriterLog
from xum.workspaces.external.agent import ExternalAgent
from xum.workspaces.external.client import ClientPlace, XumClient
from xum.workspaces.external.definitions import ExternalAgentDefinition, definition_for
from xum.workspaces.init_hook import InitHookRun
from xum.workspaces.middleware import TrustView
from xum.workspaces.safety.approvals import Approver
from xum.workspaces.safety.choice import DEFAULT_CHOICE, SafetyChoice
from xum.workspaces.safety.sandboxing import SandboxMiddleware
from xum.workspaces.state import scratch_dir
from xum.workspaces.wiring import wire_session

if TYPE_CHECKING:
    from xum.workspaces.assembly import WorkspaceSession
    from xum.workspaces.lifecycle import CreatedWorkspace


def agent_environment(definition: ExternalAgentDefinition) -> dict[str, str]:
    """The agent process's environment: xum's less its own secrets, plus the definition's."""
    return {**without_own_secrets(os.environ), **definition.env}


async def open_external_session(
    record: WorkspaceRecord,
    *,
    emit: EventSink = null_sink,
    created: CreatedWorkspace | None = None,
    runtime: Runtime | None = None,
    init: InitHookRun | None = None,
    safety: SafetyChoice = DEFAULT_CHOICE,
    approver: Approver | None = None,
    purpose: str = "session",
    hold_writer: bool = False,
    is_git: bool | None = None,
) -> WorkspaceSession:
    from xum.workspaces.assembly import WorkspaceSession, project_facts
    from xum.workspaces.checkouts.factory import checkout_for

    assert record.external_agent is not None
    # A name the config no longer has fails here, before anything is opened.
    definition = await asyncio.to_thread(definition_for, record.external_agent)
    checkout = checkout_for(record)
    owns_runtime = runtime is None
    if created is not None:
        runtime = runtime or created.runtime
        init = init or created.init
    if runtime is None:
        runtime = checkout.open_runtime()
    known = created.project if created is not None else None
    secrets = created.secrets if created is not None else None
    log = await asyncio.to_thread(WriterLog.open, record.id, purpose=f"xum {purpose}")
    try:
        facts = await asyncio.to_thread(project_facts, record, known, secrets, is_git, checkout)
        trust = TrustView(record.project_path, root=facts.trust_root)
        scratch = scratch_dir(record.id)
        wiring = await wire_session(
            record,
            runtime,
            scratch_dir=scratch,
            emit=emit,
            init=init,
            secrets=facts.secrets,
            trust=trust,
            checkout=checkout,
            safety=safety,
            approver=approver,
        )
        sandbox = next((m for m in wiring.middleware if isinstance(m, SandboxMiddleware)), None)
        place = ClientPlace(
            workspace_id=record.id,
            workspace_name=record.name,
            project_path=record.project_path,
            project_root=str(facts.trust_root),
            scratch_dir=str(scratch),
            env=dict(wiring.base_env),
            mask=wiring.masker.mask,
        )
        client = XumClient(
            place, runtime, safety=safety, approver=approver, emit=emit, sandbox=sandbox
        )
        agent = ExternalAgent(
            definition,
            workspace_id=record.id,
            log=log,
            runtime=runtime,
            client=client,
            env=agent_environment(definition),
            emit=emit,
            session_id=record.external_session,
        )
        if hold_writer:
            await agent.hold_writer(f"xum {purpose}")
    except BaseException:
        if owns_runtime:
            with contextlib.suppress(Exception):
                await runtime.close()
        log.close()
        raise
    return WorkspaceSession(
        record,
        agent,
        runtime,
        None,
        log,
        wiring,
        None,
        init=init,
        owns_client=False,
        owns_runtime=owns_runtime,
    )
