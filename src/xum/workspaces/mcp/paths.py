"""Where a workspace's MCP config files are (`xum.workspaces.mcp.config` reads them).

Kept apart from the parser so that a session can stat the three paths before each request, to
learn that there is no MCP config at all, without loading anything else.
"""

from __future__ import annotations

from pathlib import Path

from xum.core.paths import xum_root

GLOBAL_NAME = "mcp.jsonc"
REPO_FILE = ".xum/mcp.jsonc"
LOCAL_FILE = ".xum/mcp.local.jsonc"


def global_path() -> Path:
    return xum_root() / GLOBAL_NAME


def repo_path(checkout_root: str | Path) -> Path:
    return Path(checkout_root) / REPO_FILE


def local_path(workspace_path: str | Path) -> Path:
    return Path(workspace_path) / LOCAL_FILE
