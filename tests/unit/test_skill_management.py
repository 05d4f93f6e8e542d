"""agent_skill_list, agent_skill_write and agent_skill_delete over a real workspace context:
scopes, validation, the symlink fences, and the read-only roots."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.contextkit import workspace_context, write
from tests.support.tools import make_ctx
from xum.tools.base import ToolContext, ToolResult
from xum.tools.registry import validate_and_run


def skill(root: Path, name: str, description: str = "", body: str = "Do it.") -> Path:
    front = f"name: {name}\ndescription: {description or f'the {name} skill'}"
    return write(root / name / "SKILL.md", f"---\n{front}\n---\n{body}\n")


def tools_ctx(repo: Path) -> ToolContext:
    return make_ctx(repo, skills=workspace_context(repo).skill_access())


async def call(ctx: ToolContext, tool: str, **arguments: object) -> ToolResult:
    return await validate_and_run(tool, json.dumps(arguments), ctx)


def enable(xum_root: Path, **experiments: bool) -> None:
    xum_root.mkdir(parents=True, exist_ok=True)
    (xum_root / "config.json").write_text(json.dumps({"experiments": experiments}))


NEW_SKILL = "---\ndescription: Ship a release\n---\nRun the release checklist.\n"


async def test_write_creates_a_project_skill_that_can_be_read_at_once(repo: Path) -> None:
    ctx = tools_ctx(repo)
    written = await call(ctx, "agent_skill_write", name="ship", content=NEW_SKILL)
    assert not written.is_error, written.output
    path = repo / ".xum/skills/ship/SKILL.md"
    assert written.output.startswith("Created") and str(path) in written.output
    # The missing `name` is filled in from the directory.
    assert path.read_text().startswith("---\nname: ship\ndescription: Ship a release\n")
    read = await call(ctx, "agent_skill_read", name="ship")
    assert read.output == "Run the release checklist."
    again = await call(
        ctx, "agent_skill_write", name="ship", content=NEW_SKILL.replace("Run", "Do")
    )
    assert again.output.startswith("Updated")
    assert (await call(ctx, "agent_skill_read", name="ship")).output.startswith("Do the")
    ref = await call(
        ctx, "agent_skill_write", name="ship", filePath="references/steps.md", content="1. go\n"
    )
    assert not ref.is_error and (repo / ".xum/skills/ship/references/steps.md").exists()


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"name": "Bad_Name", "content": NEW_SKILL}, "not a valid skill name"),
        ({"name": "a" * 65, "content": NEW_SKILL}, "not a valid skill name"),
        ({"name": "ok", "content": "no frontmatter"}, "must start with YAML frontmatter"),
        ({"name": "ok", "content": "---\nname: ok\n---\nbody"}, "description"),
        ({"name": "ok", "content": "---\nname: other\ndescription: d\n---\n"}, "must equal"),
        ({"name": "ok", "content": "---\ndescription: [unclosed\n---\n"}, "not valid YAML"),
        ({"name": "ok", "content": "---\ndescription: d\n" + "x" * (1 << 20)}, "1 MB"),
        ({"name": "ok", "filePath": "../escape.md", "content": "x"}, "leaves the skill"),
        ({"name": "ok", "filePath": "/etc/passwd", "content": "x"}, "must be relative"),
        ({"name": "ok", "filePath": "a/.git/config", "content": "x"}, ".git"),
    ],
)
async def test_write_refuses_what_discovery_would_reject(
    repo: Path, arguments: dict[str, object], says: str
) -> None:
    result = await call(tools_ctx(repo), "agent_skill_write", **arguments)
    assert result.is_error and says in result.output, result.output
    assert not (repo / ".xum/skills/ok").exists()


async def test_skill_md_in_any_casing_is_validated(repo: Path) -> None:
    result = await call(
        tools_ctx(repo), "agent_skill_write", name="ok", filePath="skill.MD", content="plain"
    )
    assert result.is_error and "frontmatter" in result.output


async def test_symlinks_cannot_carry_a_write_out(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".xum/skills").mkdir(parents=True)
    os.symlink(outside, repo / ".xum/skills/away")
    ctx = tools_ctx(repo)
    away = await call(ctx, "agent_skill_write", name="away", content=NEW_SKILL)
    assert away.is_error and "outside the workspace" in away.output
    assert list(outside.iterdir()) == []
    skill(repo / ".xum/skills", "here")
    os.symlink(outside, repo / ".xum/skills/here/refs")
    through = await call(ctx, "agent_skill_write", name="here", filePath="refs/x.md", content="x")
    assert through.is_error and "outside the skill directory" in through.output
    (outside / "t.md").write_text("keep")
    os.symlink(outside / "t.md", repo / ".xum/skills/here/link.md")
    leaf = await call(ctx, "agent_skill_write", name="here", filePath="link.md", content="x")
    assert leaf.is_error and (outside / "t.md").read_text() == "keep"


async def test_global_scope_writes_xum_root_and_says_when_a_project_skill_wins(
    repo: Path, xum_root: Path
) -> None:
    ctx = tools_ctx(repo)
    made = await call(ctx, "agent_skill_write", name="tidy", content=NEW_SKILL, scope="global")
    assert not made.is_error and (xum_root / "skills/tidy/SKILL.md").exists()
    assert "Note" not in made.output
    skill(repo / ".xum/skills", "tidy", "project tidy")
    shadowed = await call(ctx, "agent_skill_write", name="tidy", content=NEW_SKILL, scope="global")
    assert "takes precedence" in shadowed.output and ".xum/skills/tidy" in shadowed.output


async def test_list_shows_roots_and_hides_unadvertised_unless_asked(repo: Path) -> None:
    skill(repo / ".xum/skills", "mine")
    write(
        repo / ".agents/skills/quiet/SKILL.md",
        "---\nname: quiet\ndescription: hush\nadvertise: false\n---\nx\n",
    )
    ctx = tools_ctx(repo)
    listed = await call(ctx, "agent_skill_list")
    assert "- mine (.xum/skills): the mine skill" in listed.output
    assert "xum-customize (built-in, read-only)" in listed.output
    assert "quiet" not in listed.output and "1 unadvertised" in listed.output
    everything = await call(ctx, "agent_skill_list", includeUnadvertised=True)
    assert "- quiet (.agents/skills, unadvertised, read-only): hush" in everything.output


async def test_delete_a_file_then_the_skill(repo: Path) -> None:
    skill(repo / ".xum/skills", "old")
    write(repo / ".xum/skills/old/notes.md", "n")
    ctx = tools_ctx(repo)
    unconfirmed = await call(
        ctx, "agent_skill_delete", name="old", filePath="notes.md", confirm=False
    )
    assert unconfirmed.is_error and (repo / ".xum/skills/old/notes.md").exists()
    no_path = await call(ctx, "agent_skill_delete", name="old", confirm=True)
    assert no_path.is_error and "filePath is required" in no_path.output
    core = await call(ctx, "agent_skill_delete", name="old", filePath="SKILL.md", confirm=True)
    assert core.is_error and "target 'skill'" in core.output
    gone = await call(ctx, "agent_skill_delete", name="old", filePath="notes.md", confirm=True)
    assert not gone.is_error and not (repo / ".xum/skills/old/notes.md").exists()
    whole = await call(ctx, "agent_skill_delete", name="old", target="skill", confirm=True)
    assert not whole.is_error, whole.output
    assert not (repo / ".xum/skills/old").exists()
    assert (await call(ctx, "agent_skill_read", name="old")).is_error


async def test_read_only_roots_are_never_changed(repo: Path, xum_root: Path) -> None:
    enable(xum_root, claudeCompatibility=True)
    home = Path(os.environ["HOME"])
    claude = skill(repo / ".claude/skills", "legacy", "from claude")
    agents = skill(home / ".agents/skills", "shared", "universal")
    ctx = tools_ctx(repo)
    for name in ("legacy", "shared", "xum-customize"):
        refused = await call(ctx, "agent_skill_delete", name=name, target="skill", confirm=True)
        assert refused.is_error and "read-only" in refused.output, refused.output
    assert claude.exists() and agents.exists()
    # Writing the name makes a .xum copy that wins; the Claude file is untouched.
    before = claude.read_text()
    copy = await call(ctx, "agent_skill_write", name="legacy", content=NEW_SKILL)
    assert not copy.is_error and (repo / ".xum/skills/legacy/SKILL.md").exists()
    assert claude.read_text() == before
    listed = await call(ctx, "agent_skill_list")
    assert "- legacy (.xum/skills): Ship a release" in listed.output
