"""Claude Code's skill directories (`.claude/skills`, `~/.claude/skills`): found only with the
`claudeCompatibility` experiment, always last at their level, never written."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.contextkit import live, workspace_context, write


def skill(root: Path, name: str, description: str) -> Path:
    return write(
        root / name / "SKILL.md", f"---\nname: {name}\ndescription: {description}\n---\nBody.\n"
    )


def switch(xum_root: Path, on: bool) -> None:
    xum_root.mkdir(parents=True, exist_ok=True)
    (xum_root / "config.json").write_text(json.dumps({"experiments": {"claudeCompatibility": on}}))


async def descriptions(repo: Path, cwd: Path | None = None) -> dict[str, str]:
    catalog = await workspace_context(repo, cwd).skill_catalog()
    return {name: s.description for name, s in catalog.skills.items()}


async def test_claude_roots_are_read_only_with_the_experiment(repo: Path, xum_root: Path) -> None:
    home = Path(os.environ["HOME"])
    skill(repo / ".claude/skills", "review", "project claude")
    skill(home / ".claude/skills", "notes", "home claude")
    assert "review" not in await descriptions(repo)
    switch(xum_root, True)
    found = await descriptions(repo)
    assert found["review"] == "project claude" and found["notes"] == "home claude"
    catalog = await workspace_context(repo).skill_catalog()
    assert catalog.skills["review"].root_label == ".claude/skills"
    assert catalog.skills["notes"].root_label == "~/.claude/skills"
    assert not catalog.skills["review"].writable and not catalog.skills["notes"].writable
    switch(xum_root, False)
    assert "review" not in await descriptions(repo)


async def test_claude_roots_come_last_at_their_level(repo: Path, xum_root: Path) -> None:
    switch(xum_root, True)
    home = Path(os.environ["HOME"])
    skill(repo / ".claude/skills", "a", "root claude")
    skill(repo / ".agents/skills", "a", "root agents")
    skill(repo / ".claude/skills", "b", "root claude")
    skill(repo / ".xum/skills", "b", "root xum")
    # A nearer directory still wins over a farther one, even from its Claude root.
    skill(repo / "pkg/.claude/skills", "c", "pkg claude")
    skill(repo / ".xum/skills", "c", "root xum")
    # Global: ~/.xum > ~/.agents > ~/.claude > built-in; any project root beats them all.
    skill(home / ".claude/skills", "d", "home claude")
    skill(home / ".agents/skills", "d", "home agents")
    skill(home / ".claude/skills", "e", "home claude")
    skill(xum_root / "skills", "e", "global xum")
    skill(home / ".claude/skills", "xum-customize", "home claude customize")
    skill(repo / ".claude/skills", "f", "root claude")
    skill(xum_root / "skills", "f", "global xum")
    found = await descriptions(repo, repo / "pkg")
    assert found["a"] == "root agents"
    assert found["b"] == "root xum"
    assert found["c"] == "pkg claude"
    assert found["d"] == "home agents"
    assert found["e"] == "global xum"
    assert found["xum-customize"] == "home claude customize"
    assert found["f"] == "root claude"


async def test_turning_the_experiment_on_reaches_the_next_request(
    repo: Path, xum_root: Path
) -> None:
    made = skill(repo / ".claude/skills", "review", "project claude")
    for path in (made, made.parent, made.parent.parent, repo / ".claude"):
        os.utime(path, (1_600_000_000, 1_600_000_000))  # settled: no re-read for freshness
    context = workspace_context(repo)
    first = await live(context)
    assert "review" not in first.sections["skills"]
    switch(xum_root, True)
    second = await live(context)
    assert "- review: project claude" in second.sections["skills"]
