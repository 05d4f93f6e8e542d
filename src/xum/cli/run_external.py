"""`xum run --external-agent NAME`: a run whose workspace's agent is an external ACP agent.

The workspace is created with the external agent as its agent for life (`--workspace` on such a
workspace continues it with the same agent), and the run goes through the same host as any other
(`cli/run_host.py`): the same events, `--json` NDJSON, Ctrl-C and exit codes. What belongs to
xum's own engine is refused before anything is created: a model or thinking level (the external
agent picks its own), a budget (xum knows no price for it), a goal, plan mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from xum.cli.run_outcome import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, RunOutcome
from xum.core.errors import UsageError

if TYPE_CHECKING:
    from xum.cli.run_flow import RunRequest
    from xum.store.registry import WorkspaceRecord


def _check(req: RunRequest, record: WorkspaceRecord | None) -> str:
    """The external agent's name, once the flags are known to fit it."""
    name = req.external_agent or (record.external_agent if record is not None else None)
    assert name is not None
    if record is not None and req.external_agent and record.external_agent != req.external_agent:
        have = record.external_agent or "xum's own agent"
        raise UsageError(
            f"workspace {record.name} runs {have}; a workspace keeps its agent for life",
            hint="drop --external-agent to continue it, or start a new run without --workspace",
        )
    refused = [*req.flags_given]
    if req.goal is not None:
        refused.append("--goal")
    if req.mode_given and req.mode != "exec":
        refused.append("--mode plan")
    if refused:
        raise UsageError(
            f"{', '.join(refused)}: not available with an external agent (it picks its own "
            "model and runs its own loop)",
            hint=f"drop {' and '.join(refused)}",
        )
    return name


async def execute_run(req: RunRequest) -> RunOutcome:
    """`xum run`: with an external agent (`--external-agent`, or a `--workspace` whose agent
    is one) here, else xum's own engine (`run_flow.execute`)."""
    from xum.cli.run_flow import _existing_workspace, execute

    if req.external_agent is None and req.workspace is None:
        return await execute(req)
    record = _existing_workspace(req) if req.workspace is not None else None
    if req.external_agent is not None or (record is not None and record.external_agent):
        return await execute_external(req, record)
    return await execute(req)


async def execute_external(req: RunRequest, record: WorkspaceRecord | None) -> RunOutcome:
    import asyncio

    from xum.cli.run_flow import _init_line_sink
    from xum.cli.run_host import RunAdapter
    from xum.host.workspace_host import OpenSettings
    from xum.workspaces.external.agent import MODEL_PREFIX
    from xum.workspaces.external.definitions import definition_for

    name = _check(req, record)
    await asyncio.to_thread(definition_for, name)  # an unknown name fails before any write
    text = req.text
    created = None
    if record is None:
        from xum.workspaces.lifecycle import create_workspace

        created = await create_workspace(
            req.directory,
            req.runtime,
            name_hint=" ".join(text.split()[:4]),
            title=" ".join(text.split())[:80],
            on_init_line=_init_line_sink(req.renderer),
            project_query=req.project,
            external_agent=name,
        )
        record = created.record
    adapter = RunAdapter(req, record.id, created.init if created is not None else None)
    try:
        result, _decision, host = await adapter.run(record, text, created, OpenSettings())
    finally:
        if created is not None and created.init is not None:
            created.init.cancel()
    opened = host.session.record
    extra: dict[str, Any] = {
        "workspace_id": opened.id,
        "workspace_name": opened.name,
        "workspace_path": opened.path,
        "model": MODEL_PREFIX + name,
        "text": result.text,
        "steps": result.steps,
        "usage": result.usage.to_dict(),
        "cost_usd": result.cost_usd,
        "agent": result.agent,
        "external_agent": name,
    }
    if result.error:
        extra["error"] = result.error
    code = {"completed": EXIT_OK, "interrupted": EXIT_INTERRUPTED}.get(result.reason, EXIT_ERROR)
    return RunOutcome(code, result.reason, extra)
