"""The `<environment>` block: where the agent is working, per runtime.

It names environment variables instead of literal paths wherever it can, so sibling and forked
workspaces of one project get byte-identical prompts (and share a provider prompt cache).
"""

from __future__ import annotations

from xum.runtime.base import RuntimeKind

_RUNTIME_LINES: dict[str, str] = {
    "local": (
        "You are working directly in the project directory ($XUM_PROJECT_PATH). Other "
        "workspaces and the user may edit the same files at the same time."
    ),
    "worktree": (
        "You are working in a git worktree of the project, on its own branch. Stay inside it: do "
        "not touch other worktrees or the main checkout at $XUM_PROJECT_PATH. Commits you make "
        "are visible to the other worktrees at once."
    ),
    "ssh": (
        "You are working in a clone of the project on a remote host reached over SSH. "
        "$XUM_PROJECT_PATH refers to the user's local machine, not to this host."
    ),
    "docker": (
        "You are working in a clone of the project (a git repository at /src) inside a Docker "
        "container. $XUM_PROJECT_PATH refers to the user's machine, not to this container."
    ),
    "devcontainer": (
        "You are working in a git worktree of the project inside a Dev Container (the "
        "container the project's devcontainer.json describes). $XUM_PROJECT_PATH refers to "
        "the user's machine, not to this container."
    ),
}


_PORTS_LINE = (
    "This workspace has its own block of TCP ports: $XUM_PORT is the first and $XUM_PORTS the "
    "range (first-last). Start servers you run on these ports, so they do not collide with other "
    "workspaces, and tell the user the port you used."
)


def environment_block(runtime: RuntimeKind, *, is_git: bool, ports: bool = False) -> str:
    """`ports`: the workspace has a port block (the line names the variables, not the numbers,
    so workspaces with different blocks still share the prompt)."""
    lines = [
        "<environment>",
        _RUNTIME_LINES[runtime],
        "Tools run in the workspace directory; relative paths are relative to it.",
    ]
    if is_git:
        lines.append("The workspace is a git repository.")
    lines.append(
        "Put files that do not belong in the repository under $XUM_SCRATCH_DIR (it survives "
        "restarts and is removed with the workspace), not in your home directory."
    )
    if ports:
        lines.append(_PORTS_LINE)
    lines.append("</environment>")
    return "\n".join(lines)
