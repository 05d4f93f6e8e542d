"""The environment xum gives lifecycle hooks (init, archive, delete).

Tool calls get theirs from the engine (`AgentSession.tool_context`: the `XUM_*` set over the
session's base environment, which carries the project's secrets). Lifecycle hooks run outside a
turn, so they are given the same variables from the workspace record. `XUM_*` values win over a
secret of the same name.
"""

from __future__ import annotations

from collections.abc import Mapping

from xum.store.registry import WorkspaceRecord
from xum.workspaces.ports import ports_env


def lifecycle_env(
    record: WorkspaceRecord,
    secrets: Mapping[str, str],
    *,
    init: bool = False,
) -> dict[str, str]:
    env = dict(secrets)
    env.update(
        {
            "XUM_PROJECT_PATH": record.project_path,
            "XUM_RUNTIME": record.runtime,
            "XUM_WORKSPACE_NAME": record.name,
            "XUM_WORKSPACE_ID": record.id,
            **ports_env(record),
        }
    )
    if init:
        # Init hooks also see the settings the workspace was created with. XUM_SCRATCH_DIR is
        # deliberately absent: the docs leave it out of init hooks.
        if record.model:
            env["XUM_MODEL_STRING"] = record.model
        if record.thinking:
            env["XUM_THINKING_LEVEL"] = record.thinking
        env["XUM_COSTS_USD"] = "0.00"
    return env
