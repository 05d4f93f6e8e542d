"""YAML frontmatter of agent files and skills (`---` lines around a YAML mapping).

PyYAML costs ~30 ms to import, so it is loaded only when a user's own file needs parsing; xum's
built-in agents and skills are parsed ahead of time into `builtin_index.json`.
"""

from __future__ import annotations

from typing import Any


class FrontmatterError(ValueError):
    """The frontmatter is present but unusable; the message says why."""


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(the YAML text or None when the file has no frontmatter, the body after it)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    if not text.startswith("---\n") and text.rstrip("\n") != "---":
        return None, text
    lines = text.split("\n")
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :])
    raise FrontmatterError("the frontmatter opened with --- is never closed by a --- line")


def parse_yaml_mapping(source: str) -> dict[str, Any]:
    """`yaml.safe_load` of a frontmatter block; an empty block is an empty mapping."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        value = yaml.load(source, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise FrontmatterError(f"the frontmatter is not valid YAML{where}: {problem}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FrontmatterError("the frontmatter must be a YAML mapping (key: value lines)")
    return {str(k): v for k, v in value.items()}


def parse_document(text: str) -> tuple[dict[str, Any] | None, str]:
    """(frontmatter mapping or None, body). Raises FrontmatterError."""
    source, body = split_frontmatter(text)
    if source is None:
        return None, body
    return parse_yaml_mapping(source), body


def section(data: dict[str, Any], key: str) -> dict[str, Any]:
    """A nested mapping (`ui`, `tools`, ...); anything that is not a mapping counts as absent."""
    value = data.get(key)
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def string_list(value: Any) -> tuple[str, ...] | None:
    """A list of strings (a single string counts as a list of one); None when absent."""
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(str(item) for item in value if item is not None)
    return ()


def optional_bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def optional_str(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return str(value)
    return None
