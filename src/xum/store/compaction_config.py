"""The compaction settings in `$XUM_ROOT/config.json`, read and written in one place.

* `autoCompactThresholds`: model string -> percent of the context window at which usage-based
  auto-compaction runs. 70 when a model has no entry; 100 turns it off; an enabled value is
  capped at 90, which leaves room for the reply and the summary itself.
* `compactionModel`: the model `/compact -m` chose last (sticky, for every workspace); absent:
  each workspace compacts with its own model.
* `contextWindows`: model string -> context window in tokens, for models the built-in table
  does not know (a local server's model, a proxy). Auto-compaction needs a known window.
* `projects.<path>.idleCompactHours`: idle compaction for a project's workspaces (`/idle`).

Reads take the config snapshot (`read_config`), which is parsed only when the file changed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from xum.core.errors import UsageError
from xum.store.config import read_config, update_config

THRESHOLDS_KEY: Final = "autoCompactThresholds"
COMPACTION_MODEL_KEY: Final = "compactionModel"
CONTEXT_WINDOWS_KEY: Final = "contextWindows"
IDLE_KEY: Final = "idleCompactHours"

DEFAULT_THRESHOLD: Final = 70
MAX_ENABLED_THRESHOLD: Final = 90
THRESHOLD_OFF: Final = 100
FORCE_BUFFER: Final = 5  # mid-reply, past threshold + this many points, the reply is stopped


def normalize_threshold(percent: float) -> int:
    """What a requested threshold is stored and applied as: 100 (off) stays, anything from 1
    up is capped at 90, and nothing is below 1."""
    if not math.isfinite(percent):
        raise UsageError("the auto-compaction threshold must be a number from 1 to 100")
    value = round(percent)
    if value >= THRESHOLD_OFF:
        return THRESHOLD_OFF
    return max(1, min(MAX_ENABLED_THRESHOLD, value))


def threshold_for(model: str, config: Mapping[str, Any] | None = None) -> int:
    """The threshold that applies to `model` (a `provider:model` string)."""
    config = read_config() if config is None else config
    table = config.get(THRESHOLDS_KEY)
    raw = table.get(model) if isinstance(table, Mapping) else None
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return normalize_threshold(float(raw))
    return DEFAULT_THRESHOLD


def set_threshold(model: str, percent: float) -> int:
    """Save the threshold for `model`; returns the value that applies (capped)."""
    value = normalize_threshold(percent)

    def mutate(config: dict[str, Any]) -> int:
        table = config.get(THRESHOLDS_KEY)
        if not isinstance(table, dict):
            table = config[THRESHOLDS_KEY] = {}
        table[model] = value
        return value

    return update_config(mutate)


def compaction_model(config: Mapping[str, Any] | None = None) -> str | None:
    config = read_config() if config is None else config
    value = config.get(COMPACTION_MODEL_KEY)
    return value.strip() if isinstance(value, str) and value.strip() else None


def set_compaction_model(model: str) -> None:
    def mutate(config: dict[str, Any]) -> None:
        config[COMPACTION_MODEL_KEY] = model

    update_config(mutate)


def configured_window(model: str, config: Mapping[str, Any] | None = None) -> int | None:
    """The context window config.json declares for `model`, if any."""
    config = read_config() if config is None else config
    table = config.get(CONTEXT_WINDOWS_KEY)
    raw = table.get(model) if isinstance(table, Mapping) else None
    if isinstance(raw, int) and not isinstance(raw, bool) and raw > 0:
        return raw
    return None


def idle_hours(project_path: str, config: Mapping[str, Any] | None = None) -> float | None:
    """The idle compaction of a project, in hours (None: off, the default)."""
    config = read_config() if config is None else config
    projects = config.get("projects")
    entry = projects.get(project_path) if isinstance(projects, Mapping) else None
    raw = entry.get(IDLE_KEY) if isinstance(entry, Mapping) else None
    if isinstance(raw, int | float) and not isinstance(raw, bool) and raw > 0:
        return float(raw)
    return None


def set_idle_hours(project_path: str, hours: float | None) -> None:
    """Turn idle compaction on (`hours`) or off (None) for a registered project."""

    def mutate(config: dict[str, Any]) -> None:
        projects = config.get("projects")
        entry = projects.get(project_path) if isinstance(projects, dict) else None
        if not isinstance(entry, dict):
            raise UsageError(
                f"{project_path} is not a registered project",
                hint="open it in xum first (xum server --add-project, or xum run in it)",
            )
        if hours is None:
            entry.pop(IDLE_KEY, None)
        else:
            entry[IDLE_KEY] = hours

    update_config(mutate)
