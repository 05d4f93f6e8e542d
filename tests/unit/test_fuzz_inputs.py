"""Fuzzing what comes from outside: config text, frontmatter, provider streams, a model's tool
arguments, and the paths a model asks the edit tools to write.

Each property says what must hold for *every* input: a parse either succeeds or fails with the
typed error that names the problem (never another exception), arbitrary bytes never crash the
SSE parser, any JSON a model sends a tool ends in a result (an error the model can read), and no
path, however spelled (`..`, absolute, through symlinks, unicode look-alikes, NULs), makes the
write fence approve a file outside the workspace. Example counts are capped (`EXAMPLES`) and
derandomized so `make test` stays fast and repeatable; docs/security.md publishes the counts.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.tools import make_ctx
from xum.context.frontmatter import FrontmatterError, parse_document
from xum.core.errors import ConfigError
from xum.core.jsonc import parse_jsonc
from xum.llm.errors import LLMError
from xum.llm.sse import SSEParser
from xum.tools import registry
from xum.tools.paths import PathRefused, resolve_read_path, resolve_write_path

EXAMPLES = 150
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)

JSONISH = st.text(
    alphabet=st.sampled_from(list("{}[]\":,/*\n 0123456789.-+eEtrufalsn\\ab'#")), max_size=80
)


@FUZZ
@given(JSONISH)
def test_jsonc_parses_or_names_the_place(text: str) -> None:
    try:
        parse_jsonc(text, path="/cfg.jsonc")
    except ConfigError as exc:
        assert exc.message.startswith("/cfg.jsonc")


@FUZZ
@given(
    st.one_of(
        st.text(max_size=120),
        st.builds(
            lambda y, b: f"---\n{y}\n---\n{b}",
            st.text(alphabet=st.sampled_from(list("ab: -[]{}\n'\"&*!|>#?%@`")), max_size=60),
            st.text(max_size=20),
        ),
    )
)
def test_frontmatter_parses_or_says_why(text: str) -> None:
    try:
        meta, body = parse_document(text)
    except FrontmatterError as exc:
        assert str(exc)
        return
    assert meta is None or isinstance(meta, dict)
    assert isinstance(body, str)


@FUZZ
@given(st.lists(st.binary(max_size=64), max_size=12))
def test_sse_parser_takes_any_bytes(chunks: list[bytes]) -> None:
    parser = SSEParser()
    try:
        for chunk in chunks:
            for name, data in parser.feed(chunk):
                assert isinstance(name, str) and isinstance(data, bytes)
    except LLMError as exc:
        assert exc.kind == "invalid_response"


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
TOOLS_FUZZED = ("file_read", "file_edit_replace_string", "todo_write", "web_fetch", "task_list")


@FUZZ
@given(
    st.sampled_from(TOOLS_FUZZED),
    st.one_of(
        st.dictionaries(
            st.sampled_from(
                ["path", "offset", "limit", "old_string", "new_string", "todos", "url", "x"]
            ),
            JSON_VALUES,
            max_size=5,
        ),
        JSON_VALUES,
        st.text(max_size=40).map(lambda t: f"raw:{t}"),
    ),
)
def test_any_tool_arguments_end_in_a_result(
    tmp_path_factory: pytest.TempPathFactory, tool: str, arguments: object
) -> None:
    """Bad JSON, wrong types, unknown fields: a result the model can read, never an exception.
    (Network and the workspace are real: web_fetch may only refuse or fail, the file tools act
    in a throwaway workspace.)"""
    raw = arguments[4:] if isinstance(arguments, str) and arguments.startswith("raw:") else None
    text = raw if raw is not None else json.dumps(arguments)  # big ints too, as a model may
    ctx = make_ctx(tmp_path_factory.mktemp("fuzz"))
    if tool == "web_fetch":
        text = orjson.dumps({"url": "http://127.0.0.1:9/"}).decode() if raw is None else text
    result = asyncio.run(registry.validate_and_run(tool, text, ctx, available=list(TOOLS_FUZZED)))
    assert isinstance(result.output, str) and result.output


# Path containment ------------------------------------------------------------------------------

SEGMENTS = st.sampled_from(
    [
        "..", ".", "", "a", "b", "ws", "out", "link-out", "link-in", ".git", ".GIT", ".xum",
        "\u2024\u2024",  # one-dot leaders: they look like ".." but are a name
        "\uff0e\uff0e",  # fullwidth full stops
        "a\u0000b", "~", "%2e%2e", "..\\..", "link-out/..", "e\u0301",
    ]
)  # fmt: skip


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("contain")
    (base / "ws" / "a").mkdir(parents=True)
    (base / "out").mkdir()
    (base / "ws" / "link-out").symlink_to(base / "out")
    (base / "ws" / "link-in").symlink_to(base / "ws" / "a")
    (base / "ws" / "a" / "deep-out").symlink_to(base / "out")
    return base


@FUZZ
@given(st.lists(SEGMENTS, min_size=1, max_size=6), st.booleans())
def test_no_path_writes_outside_the_workspace(tree: Path, parts: list[str], absolute: bool) -> None:
    ctx = make_ctx(tree)
    workspace = os.path.realpath(tree / "ws")
    roots = [workspace, os.path.realpath(ctx.scratch_dir), os.path.realpath(ctx.runtime.temp_dir)]
    path = "/".join(parts)
    if absolute:
        path = str(tree / "ws" / path)
    try:
        target = asyncio.run(resolve_write_path(ctx, path))
    except PathRefused as refused:
        assert str(refused)
        return
    canonical = os.path.realpath(target.path)
    assert canonical == target.path
    assert any(canonical == r or canonical.startswith(r + "/") for r in roots), (path, canonical)
    relative = canonical[len(workspace) :].split("/") if canonical.startswith(workspace) else []
    assert not {p.lower() for p in relative} & {".git", ".xum"}, (path, canonical)
    assert "\0" not in canonical


@FUZZ
@given(st.lists(SEGMENTS, min_size=1, max_size=6))
def test_reads_resolve_or_refuse(tree: Path, parts: list[str]) -> None:
    ctx = make_ctx(tree)
    try:
        resolved = asyncio.run(resolve_read_path(ctx, "/".join(parts)))
    except PathRefused as refused:
        assert str(refused)
        return
    assert resolved == os.path.realpath(resolved)
