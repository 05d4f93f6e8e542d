"""Text handling shared by instruction files, agent bodies and skills.

Everything here treats its input as untrusted: a repository decides what its AGENTS.md, agent
files and skills say, but it must not be able to end the tags xum wraps them in and continue
"outside" as if it were xum speaking. `escape_untrusted` neutralizes any tag name xum uses for
its own framing; everything else (Markdown, `<details>`, code) passes through unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Tag names xum frames prompt text with. A `<` that opens (or closes) one of them inside
# untrusted text becomes `&lt;`, so the model reads it as text.
_RESERVED = (
    r"prelude|environment|agent|agent-skills|skill|custom-instructions|context-update|"
    r"plan-mode|plan-file-changed|tool-instructions|system|mcp-resource|model-[\w.:-]*|mode-[\w.:-]*|"
    r"xum[\w.:-]*"
)
_RESERVED_TAG = re.compile(rf"<(\s*/?\s*)(?=(?:{_RESERVED})(?:[\s/>]|$))", re.IGNORECASE)

_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_BLANK_RUNS = re.compile(r"\n{3,}")

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SCOPED = re.compile(r"^(model|mode|tool|agent)[ \t]*:[ \t]*(.+?)[ \t]*$", re.IGNORECASE)


def escape_untrusted(text: str) -> str:
    """`text` with every opening or closing tag of xum's own framing made inert."""
    if "<" not in text:
        return text
    return _RESERVED_TAG.sub(lambda m: "&lt;" + m.group(1), text)


def strip_html_comments(text: str) -> str:
    """Remove `<!-- ... -->` comments (editor-only notes); an unclosed one runs to the end, as
    a Markdown renderer would hide it."""
    if "<!--" not in text:
        return text
    text = _COMMENT.sub("", text)
    cut = text.find("<!--")
    return text[:cut] if cut >= 0 else text


def tidy(text: str) -> str:
    """Trailing spaces gone, runs of blank lines collapsed, no blank lines at either end."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    return _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip("\n")


def one_line(text: str, limit: int) -> str:
    """Whitespace collapsed to single spaces, cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


@dataclass(frozen=True, slots=True)
class ScopedSection:
    """A `## Model: ...` (mode, tool, agent) section cut out of an instruction file."""

    kind: str  # "model", "mode", "tool" or "agent" (lowercase)
    key: str  # what follows the colon: a regex, a mode, a tool name
    body: str  # the section's content without its heading, tidied


def split_scoped(text: str, kinds: frozenset[str]) -> tuple[str, list[ScopedSection]]:
    """Cut the scoped sections of the given kinds out of Markdown `text`.

    A scoped section starts at a heading like `## Tool: bash` and runs up to the next heading of
    the same or a higher level (fewer `#`). Headings inside fenced code blocks do not count.
    Returns the remaining text (tidied) and the sections in document order.
    """
    if not kinds or ":" not in text:
        return tidy(text), []
    kept: list[str] = []
    sections: list[ScopedSection] = []
    current: ScopedSection | None = None
    current_level = 0
    body: list[str] = []
    fence: str | None = None

    def close() -> None:
        nonlocal current
        if current is not None:
            sections.append(ScopedSection(current.kind, current.key, tidy("\n".join(body))))
            current = None

    for line in text.replace("\r\n", "\n").split("\n"):
        if fence is None:
            opened = _FENCE.match(line)
            if opened:
                fence = opened.group(1)
        else:
            stripped = line.strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                fence = None
            (body if current is not None else kept).append(line)
            continue
        heading = _HEADING.match(line) if fence is None else None
        if heading:
            level = len(heading.group(1))
            if current is not None and level <= current_level:
                close()
            if current is None:
                scoped = _SCOPED.match(heading.group(2) or "")
                if scoped and scoped.group(1).lower() in kinds:
                    current = ScopedSection(scoped.group(1).lower(), scoped.group(2), "")
                    current_level = level
                    body = []
                    continue
        (body if current is not None else kept).append(line)
    close()
    return tidy("\n".join(kept)), sections
