"""Reading `$skill` references and running skill directives: which `$word`s are references,
and the directive limits (count, output size, failures)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.contextkit import workspace_context, write
from tests.support.tools import make_ctx
from xum.context.skill_directives import (
    MAX_DIRECTIVES,
    MAX_OUTPUT_BYTES,
    CommandOutput,
    expand_directives,
    fenced,
)
from xum.context.skill_refs import MAX_REFERENCES, referenced_skills
from xum.core.paths import xum_root
from xum.workspaces.skill_commands import WorkspaceSkillCommands


def skill(repo: Path, name: str, extra: str = "") -> None:
    write(
        repo / f".xum/skills/{name}/SKILL.md",
        f"---\nname: {name}\ndescription: d\n{extra}---\nbody of {name}\n",
    )


async def names(repo: Path, text: str) -> list[str]:
    catalog = await workspace_context(repo).skill_catalog()
    return [s.name for s in referenced_skills(text, catalog)]


async def test_which_words_are_references(repo: Path) -> None:
    for name in ("lint", "fix-it", "a1"):
        skill(repo, name)
    assert await names(repo, "$lint") == ["lint"]
    assert await names(repo, "run ($fix-it), then $a1.") == ["fix-it", "a1"]
    assert await names(repo, '"$lint" and $lint again') == ["lint"]
    # Not references: glued to a word, a longer name, shell-ish uses, code.
    assert await names(repo, "a$lint $lint-more $lint_x ${lint} $Lint") == []
    assert await names(repo, "`echo $lint` and\n```\n$fix-it\n```\n") == []
    assert await names(repo, "```\nunclosed $lint") == []


async def test_at_most_five_skills_are_attached(repo: Path) -> None:
    for index in range(7):
        skill(repo, f"s{index}")
    text = " ".join(f"$s{index}" for index in range(7))
    assert await names(repo, text) == [f"s{index}" for index in range(MAX_REFERENCES)]


def enable_dynamic_context() -> None:
    root = xum_root()
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps({"experiments": {"skillDynamicContext": True}}))


def commands(tmp_path: Path, trusted: bool = True) -> WorkspaceSkillCommands:
    ctx = make_ctx(tmp_path)
    return WorkspaceSkillCommands(
        trusted=lambda: trusted, context=lambda: ctx, sandbox=None, mask=lambda s: s
    )


async def test_directive_limits(tmp_path: Path) -> None:
    enable_dynamic_context()
    body = "\n".join(f"!`echo n{index}`" for index in range(MAX_DIRECTIVES + 2))
    expanded = await expand_directives(body, commands(tmp_path))
    assert "```\nn0\n```" in expanded and f"```\nn{MAX_DIRECTIVES - 1}\n```" in expanded
    assert f"[xum: `echo n{MAX_DIRECTIVES}` was not run: at most {MAX_DIRECTIVES}" in expanded
    big = await expand_directives(
        f"!`head -c {MAX_OUTPUT_BYTES * 3} /dev/zero | tr '\\0' a`", commands(tmp_path)
    )
    assert big.count("a") <= MAX_OUTPUT_BYTES + 10 and "[output cut at 16 KB]" in big
    assert await expand_directives("!`false`", commands(tmp_path)) == "```\n[exit code 1]\n```"


async def test_untrusted_projects_run_nothing(tmp_path: Path) -> None:
    enable_dynamic_context()
    marker = tmp_path / "ran"
    expanded = await expand_directives(f"!`touch {marker}`", commands(tmp_path, trusted=False))
    assert "was not run: the project is not trusted" in expanded and not marker.exists()


async def test_off_means_plain_text(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    body = f"!`touch {marker}`"
    assert await expand_directives(body, commands(tmp_path)) == body and not marker.exists()


def test_output_cannot_close_its_fence() -> None:
    block = fenced(CommandOutput("```\nescape\n````", exit_code=0))
    assert block.startswith("`````\n") and block.endswith("\n`````")
    assert fenced(CommandOutput("", exit_code=None, timed_out=True)) == (
        "```\n[timed out after 10 s]\n```"
    )
