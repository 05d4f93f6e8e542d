"""The in-place JSONC editor behind the settings page: one value changes, every other byte stays."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xum.core.errors import ConfigError
from xum.core.jsonc import parse_jsonc
from xum.server.jsonc_edit import JsoncDocument, JsoncEditError

COMMENTED = """// My providers. Keep this comment.
{
  // Work account
  "anthropic": {
    "apiKey": "sk-old", // rotated monthly
    "baseUrl": "https://proxy.example/v1"
  },
  /* a local model */
  "ollama": {},
  "openrouter": {"order": ["a", "b"], "allow_fallbacks": false},
}
"""


def parsed(text: str) -> Any:
    return parse_jsonc(text, path="t")


def test_replacing_a_value_keeps_every_other_byte() -> None:
    out = JsoncDocument(COMMENTED).set(["anthropic", "apiKey"], "sk-new")
    assert out == COMMENTED.replace('"sk-old"', '"sk-new"')


def test_adding_a_member_keeps_comments_and_trailing_comma_style() -> None:
    out = JsoncDocument(COMMENTED).set(["openai", "apiKey"], "sk-openai")
    data = parsed(out)
    assert data["openai"] == {"apiKey": "sk-openai"}
    assert data["openrouter"] == {"order": ["a", "b"], "allow_fallbacks": False}
    for line in ("// My providers. Keep this comment.", "// Work account", "/* a local model */"):
        assert line in out
    assert "// rotated monthly" in out
    assert out.endswith('  "openai": {\n    "apiKey": "sk-openai"\n  },\n}\n')
    assert out.startswith(COMMENTED[: COMMENTED.index('  "openrouter"')])


def test_adding_into_an_empty_object_and_a_nested_missing_object() -> None:
    out = JsoncDocument(COMMENTED).set(["ollama", "baseUrl"], "http://box:11434")
    assert parsed(out)["ollama"] == {"baseUrl": "http://box:11434"}
    out2 = JsoncDocument('{"a": 1, "b": 2}').set(["c", "d"], "x")
    assert out2 == '{"a": 1, "b": 2, "c": {"d": "x"}}'


def test_removing_a_member_takes_its_line_and_fixes_the_comma() -> None:
    out = JsoncDocument(COMMENTED).delete(["anthropic", "baseUrl"])
    assert parsed(out)["anthropic"] == {"apiKey": "sk-old"}
    assert '"apiKey": "sk-old" // rotated monthly' in out  # the comma before it went too
    out2 = JsoncDocument(COMMENTED).delete(["anthropic", "apiKey"])
    assert parsed(out2)["anthropic"] == {"baseUrl": "https://proxy.example/v1"}
    assert "rotated monthly" not in out2  # the removed member's own trailing comment
    assert "// Work account" in out2


def test_removing_what_is_not_there_changes_nothing() -> None:
    assert JsoncDocument(COMMENTED).delete(["openai", "apiKey"]) == COMMENTED


def test_duplicate_keys_edit_the_one_that_wins_and_delete_all() -> None:
    text = '{"a": {"k": 1}, "a": {"k": 2}}'
    assert parsed(JsoncDocument(text).set(["a", "k"], 3))["a"] == {"k": 3}
    assert parsed(JsoncDocument('{"a": 1, "a": 2, "b": 3}').delete(["a"])) == {"b": 3}


def test_json5_syntax_is_understood() -> None:
    text = "{unquoted: 'single', /* c */ list: [1, {x: 2}], n: -1.5e3, h: 0x1F,}"
    out = JsoncDocument(text).set(["unquoted"], "double")
    assert out == text.replace("'single'", '"double"')


def test_blank_or_missing_file_gets_a_fresh_object() -> None:
    out = JsoncDocument("").set(["anthropic", "apiKey"], "k")
    assert parsed(out) == {"anthropic": {"apiKey": "k"}}
    assert out.endswith("\n")


def test_unparseable_text_is_refused_with_its_position() -> None:
    with pytest.raises(ConfigError) as info:
        JsoncDocument('{"a": 1,\n  "b": }', path="providers.jsonc")
    assert "providers.jsonc:2" in info.value.message


def test_top_level_must_be_an_object() -> None:
    with pytest.raises(JsoncEditError):
        JsoncDocument("[1, 2]")


def test_values_with_quotes_and_unicode_round_trip() -> None:
    value = 'k"e\\y\u00e9\u2028'
    assert (
        parsed(JsoncDocument(COMMENTED).set(["anthropic", "apiKey"], value))["anthropic"]["apiKey"]
        == value
    )


keys = st.sampled_from(["anthropic", "openai", "ollama", "x-custom", "a b"])
values = st.one_of(st.text(max_size=20), st.integers(), st.booleans(), st.none())


@settings(max_examples=60, deadline=None)
@given(
    data=st.dictionaries(keys, st.dictionaries(st.sampled_from(["apiKey", "baseUrl"]), values)),
    target=st.tuples(keys, st.sampled_from(["apiKey", "baseUrl", "models"])),
    value=values,
    delete=st.booleans(),
    indent=st.sampled_from([None, 2, 4, "\t"]),
)
def test_any_edit_changes_exactly_that_value(
    data: dict[str, Any], target: tuple[str, str], value: Any, delete: bool, indent: Any
) -> None:
    text = "// header\n" + json.dumps(data, indent=indent, ensure_ascii=False) + "\n// footer\n"
    doc = JsoncDocument(text)
    path = list(target)
    out = doc.delete(path) if delete else doc.set(path, value)
    expected = json.loads(json.dumps(data))
    if delete:
        expected.get(target[0], {}).pop(target[1], None)
    else:
        expected.setdefault(target[0], {})[target[1]] = value
    assert parsed(out) == expected
    assert out.startswith("// header\n") and out.endswith("// footer\n")


@pytest.mark.parametrize(
    "text",
    [
        COMMENTED.replace('    "apiKey": "sk-old", // rotated monthly\n', ""),
        '{\n  "anthropic": {\n    "baseUrl": "u" // no trailing comma\n  }\n}\n',
        '{\n  "anthropic": {\n    "baseUrl": "u", /* block */\n  },\n}\n',
        '{"anthropic": {"baseUrl": "u"}}',
        '{"anthropic": {"baseUrl": "u",}, "b": 1}',
        '{\n  "anthropic": {\n    // only a comment\n  }\n}\n',
    ],
)
def test_adding_then_removing_a_key_gives_back_the_same_text(text: str) -> None:
    added = JsoncDocument(text).set(["anthropic", "apiKey"], "k")
    assert parsed(added)["anthropic"]["apiKey"] == "k"
    assert JsoncDocument(added).delete(["anthropic", "apiKey"]) == text
