"""Which devcontainer.json files a project has, and which one a Dev Container workspace uses.

Looked for where the Dev Container CLI and editors look: `.devcontainer/devcontainer.json` and
`.devcontainer.json` at the project root (the unnamed config, the first of the two that exists),
and `.devcontainer/<name>/devcontainer.json` (named configs, offered by their folder's name).
The runtime is available for a project only when at least one exists (the server lists them in
the project's info so that the browser shows the choice only then).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from xum.core.errors import XumError

# A named config's folder name as a runtime spec may carry it (`devcontainer <name>`).
CONFIG_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_UNNAMED = (".devcontainer/devcontainer.json", ".devcontainer.json")


class DevcontainerConfigError(XumError):
    code = "devcontainer_config"


@dataclass(frozen=True)
class DevcontainerConfig:
    name: str | None  # the named config's folder; None for the unnamed one
    path: str  # relative to the project root, with forward slashes


def find_configs(project: Path | str) -> list[DevcontainerConfig]:
    """The project's configs: the unnamed one first (when there is one), then the named ones
    by name."""
    root = Path(project)
    found: list[DevcontainerConfig] = []
    for relative in _UNNAMED:
        if (root / relative).is_file():
            found.append(DevcontainerConfig(None, relative))
            break
    folder = root / ".devcontainer"
    try:
        children = sorted(folder.iterdir()) if folder.is_dir() else []
    except OSError:
        children = []
    for child in children:
        if CONFIG_NAME_RE.fullmatch(child.name) and (child / "devcontainer.json").is_file():
            found.append(
                DevcontainerConfig(child.name, f".devcontainer/{child.name}/devcontainer.json")
            )
    return found


def choose_config(project: Path | str, name: str | None) -> DevcontainerConfig:
    """The config a new workspace uses: the named one when `name` is given; else the unnamed
    one, or the only named one. DevcontainerConfigError says what exists when that fails."""
    configs = find_configs(project)
    names = [c.name for c in configs if c.name is not None]
    listed = ", ".join(names) if names else "none"
    if not configs:
        raise DevcontainerConfigError(
            f"{project} has no devcontainer.json",
            hint="add .devcontainer/devcontainer.json (or .devcontainer.json, or "
            ".devcontainer/<name>/devcontainer.json), or pick another runtime",
        )
    if name is not None:
        for config in configs:
            if config.name == name:
                return config
        raise DevcontainerConfigError(
            f"{project} has no devcontainer config named {name!r} (named configs: {listed})",
            hint='use -r "devcontainer <name>" with one of those names',
        )
    if configs[0].name is None:
        return configs[0]
    if len(configs) == 1:
        return configs[0]
    raise DevcontainerConfigError(
        f"{project} has several devcontainer configs and none unnamed: {listed}",
        hint='pick one: -r "devcontainer <name>"',
    )


__all__ = [
    "CONFIG_NAME_RE",
    "DevcontainerConfig",
    "DevcontainerConfigError",
    "choose_config",
    "find_configs",
]
