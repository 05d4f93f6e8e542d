"""The in-place JSONC editor on lists (providers.jsonc `models`): an item is added at the end or
removed, and every other byte stays."""

from __future__ import annotations

import pytest

from xum.core.jsonc import parse_jsonc
from xum.server.jsonc_edit import JsoncDocument, JsoncEditError

TEXT = """{
  "inline": {"models": ["a", "b"]},
  "lines": {
    "models": [
      "a", // first
      "b",
    ],
  },
  "empty": {"models": []},
  "commented": {"models": [ /* none yet */ ]},
  "commented-lines": {
    "models": [
      // none yet
    ],
  },
  "plain": {"k": 1},
}
"""


def added(path: list[str], value: str) -> str:
    return JsoncDocument(TEXT).append(path, value)


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        (["inline", "models"], '["a", "b"]', '["a", "b", "c/d:1"]'),
        (["empty", "models"], "[]", '["c/d:1"]'),
        (["commented", "models"], "[ /* none yet */ ]", '[ /* none yet */ "c/d:1"]'),
        (["plain", "models"], '{"k": 1}', '{"k": 1, "models": ["c/d:1"]}'),
        (
            ["lines", "models"],
            '      "b",\n    ],',
            '      "b",\n      "c/d:1",\n    ],',  # the trailing-comma style carries on
        ),
        (
            ["commented-lines", "models"],
            "      // none yet\n    ],",
            '      // none yet\n      "c/d:1"\n    ],',
        ),
    ],
)
def test_appending_changes_only_the_list(path: list[str], old: str, new: str) -> None:
    out = added(path, "c/d:1")
    assert TEXT.count(old) == 1
    assert out == TEXT.replace(old, new)


def test_appending_to_a_missing_entry_creates_it() -> None:
    out = added(["openai", "models"], "ft:x")
    assert parse_jsonc(out, path="t")["openai"] == {"models": ["ft:x"]}
    assert out.startswith(TEXT[: TEXT.rindex("}")])


def test_a_value_that_is_not_a_list_is_refused() -> None:
    with pytest.raises(JsoncEditError, match="not a list"):
        added(["plain", "k"], "x")


@pytest.mark.parametrize(
    ("path", "value", "old", "new"),
    [
        (["inline", "models"], "a", '["a", "b"]', '["b"]'),
        (["inline", "models"], "b", '["a", "b"]', '["a"]'),
        (["lines", "models"], "b", '      "b",\n', ""),
        (["lines", "models"], "a", '      "a", // first\n', ""),
    ],
)
def test_removing_an_item(path: list[str], value: str, old: str, new: str) -> None:
    out = JsoncDocument(TEXT).remove_item(path, value)
    assert out == TEXT.replace(old, new)


def test_removing_every_copy_and_what_is_not_there() -> None:
    doc = JsoncDocument('{"p": {"models": ["x", "y", "x"]}}')
    assert doc.remove_item(["p", "models"], "x") == '{"p": {"models": ["y"]}}'
    assert doc.remove_item(["p", "models"], "zzz") == doc.text
    assert doc.remove_item(["q", "models"], "x") == doc.text


@pytest.mark.parametrize("path", [["inline", "models"], ["empty", "models"], ["lines", "models"]])
def test_append_then_remove_gives_back_the_text(path: list[str]) -> None:
    out = added(path, "new-model")
    assert JsoncDocument(out).remove_item(path, "new-model") == TEXT


def test_nested_lists_and_objects_in_lists_still_parse() -> None:
    text = '{"p": {"models": ["a"], "order": [["x", {"y": [1, 2]}], []]}}'
    out = JsoncDocument(text).append(["p", "models"], "b")
    assert out == text.replace('["a"]', '["a", "b"]')
