"""xum's built-in agents and skills, shipped as package data.

The Markdown files under `builtin_agents/` and `builtin_skills/` are the source; their
frontmatter is parsed ahead of time into `builtin_index.json`, so starting a session never
imports PyYAML just to read what xum itself ships. A test fails when the index is stale:

    python -m xum.context.builtin --write    # regenerate
    python -m xum.context.builtin --check    # exit 1 when stale
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
AGENTS_DIR = HERE / "builtin_agents"
SKILLS_DIR = HERE / "builtin_skills"
INDEX_PATH = HERE / "builtin_index.json"


@cache
def builtin_index() -> dict[str, Any]:
    """{"agents": [{"id", "data", "body"}], "skills": [{"name", "data"}]}."""
    loaded: dict[str, Any] = orjson.loads(INDEX_PATH.read_bytes())
    return loaded


def skill_dir(name: str) -> str:
    return str(SKILLS_DIR / name)


def generate() -> bytes:
    from xum.context.frontmatter import parse_document

    agents = []
    for path in sorted(AGENTS_DIR.glob("*.md")):
        data, body = parse_document(path.read_text(encoding="utf-8"))
        agents.append({"id": path.stem, "data": data or {}, "body": body.strip("\n")})
    skills = []
    for path in sorted(SKILLS_DIR.glob("*/SKILL.md")):
        data, _body = parse_document(path.read_text(encoding="utf-8"))
        skills.append({"name": path.parent.name, "data": data or {}})
    return orjson.dumps({"agents": agents, "skills": skills}, option=orjson.OPT_INDENT_2) + b"\n"


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m xum.context.builtin")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="regenerate builtin_index.json")
    group.add_argument("--check", action="store_true", help="exit 1 when the index is stale")
    args = parser.parse_args(argv)
    fresh = generate()
    if args.write:
        INDEX_PATH.write_bytes(fresh)
        return 0
    current = INDEX_PATH.read_bytes() if INDEX_PATH.exists() else b""
    if current != fresh:
        print(f"{INDEX_PATH} is stale: run python -m xum.context.builtin --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
