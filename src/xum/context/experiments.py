"""Opt-in experiments, switched on by the user in `$XUM_ROOT/config.json`:

    "experiments": {"claudeCompatibility": true, "skillDynamicContext": true}

* `claudeCompatibility`: skills are also found in Claude Code's directories (`.claude/skills` in
  the project, `~/.claude/skills`), read-only and after xum's own at the same level.
* `skillDynamicContext`: a skill the user invokes (`/<name>` or `$<name>`) runs its
  ``!`command` `` lines in the workspace and shows their output in their place (trusted
  projects only; `xum.context.skill_directives`).

Only the user's global config switches them: nothing in a repository can. The file is read on
every question (`read_config` caches it on its identity), so a change applies to the next
request.
"""

from __future__ import annotations

from xum.store.config import read_config

CLAUDE_COMPATIBILITY = "claudeCompatibility"
SKILL_DYNAMIC_CONTEXT = "skillDynamicContext"


def enabled(name: str) -> bool:
    """Whether the experiment `name` is on (`true` in config.json's `experiments`)."""
    section = read_config().get("experiments")
    return isinstance(section, dict) and section.get(name) is True


def claude_compatibility() -> bool:
    return enabled(CLAUDE_COMPATIBILITY)


def skill_dynamic_context() -> bool:
    return enabled(SKILL_DYNAMIC_CONTEXT)
