"""Parse errors in JSONC files point at the offending character itself: json5 reports some
errors one column late, and xum corrects that when an exact locator agrees (xum.core.jsonc)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xum.core.errors import ConfigError
from xum.core.jsonc import parse_jsonc
from xum.store.providers import load_providers


def error_at(text: str) -> tuple[int | None, int | None, str]:
    with pytest.raises(ConfigError) as info:
        parse_jsonc(text, path="f.jsonc")
    return info.value.line, info.value.column, info.value.message


def test_a_doubled_comma_at_column_90_is_reported_at_column_90(xum_root: Path) -> None:
    prefix = '{"anthropic": {"apiKey": "' + "k" * 28 + '", "baseUrl": "http://localhost:9"'
    text = prefix + ",, " + '"models": []}}\n'
    assert text.index(",,") + 2 == 90  # the second comma is the 90th character
    xum_root.mkdir(parents=True)
    (xum_root / "providers.jsonc").write_text(text)
    with pytest.raises(ConfigError) as info:
        load_providers()
    assert (info.value.line, info.value.column) == (1, 90)
    assert 'Unexpected ","' in info.value.message
    assert f"{xum_root / 'providers.jsonc'}:1:90:" in str(info.value)


@pytest.mark.parametrize(
    ("text", "line", "column", "char"),
    [
        ('{"a": 1,, "b": 2}', 1, 9, '","'),  # json5 alone says 10
        ('{\n  "a": [1, 2}', 2, 13, '"}"'),  # json5 alone says 14
        ('// note\n{"a": 1, /* gone */ ,}', 2, 21, '","'),  # comments do not move it
        ('{"a": "é",, }', 1, 11, '","'),  # columns count characters, not bytes
        ('{"a": x}', 1, 7, '"x"'),  # json5 was right: kept
        ('{"a": 1}}', 1, 9, '"}"'),
        ('{"a": 1\n "b": 2}', 2, 2, '"""'),
    ],
)
def test_the_reported_position_is_the_offending_character(
    text: str, line: int, column: int, char: str
) -> None:
    assert error_at(text)[:2] == (line, column)
    assert f"Unexpected {char}" in error_at(text)[2]


def test_json5_syntax_keeps_json5_s_position() -> None:
    # Unquoted keys stop the stdlib early, so its position is not taken.
    assert error_at("{a: 1, b: x}")[:2] == (1, 11)


def test_valid_jsonc_still_parses() -> None:
    text = '// c\n{"a": [1, 2,], /* x */ "b": {"c": "s,]\\" //",},}'
    assert parse_jsonc(text, path="f") == {"a": [1, 2], "b": {"c": 's,]" //'}}


@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(st.text("abcxyz", min_size=1, max_size=6), min_size=2, max_size=6, unique=True),
    values=st.lists(st.integers(0, 10**6) | st.text("pqr ,]", max_size=8), min_size=6),
    where=st.integers(0, 4),
    pad=st.text(" \n", max_size=3),
)
def test_a_doubled_comma_anywhere_is_pointed_at(
    keys: list[str], values: list[object], where: int, pad: str
) -> None:
    import json

    members = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in zip(keys, values, strict=False)]
    cut = min(where, len(members) - 2)
    text = "{" + ", ".join(members[: cut + 1]) + "," + pad + "," + ", ".join(members[cut + 1 :])
    text += "}"
    # Where the second comma is, by construction (a value may contain ",," itself).
    offender = len("{" + ", ".join(members[: cut + 1]) + "," + pad)
    line = text.count("\n", 0, offender) + 1
    column = offender - (text.rfind("\n", 0, offender) + 1) + 1
    assert error_at(text)[:2] == (line, column)
