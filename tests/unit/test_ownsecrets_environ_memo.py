"""The environment filters keep what they made of `os.environ` until it changes: every change
made through `os.environ` (set, replace, delete, update) is seen by the next call, and each
caller gets a dict of its own."""

from __future__ import annotations

import os

import pytest

from xum.core.ownsecrets import known_values, without_own_secrets


def test_a_change_of_the_environment_is_seen_by_the_next_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XUMTEST_PLAIN", "one")
    monkeypatch.setenv("XUMTEST_API_KEY", "sk-first")
    assert without_own_secrets(os.environ)["XUMTEST_PLAIN"] == "one"
    assert known_values()["XUMTEST_API_KEY"] == "sk-first"
    # Same size and keys, a new value.
    monkeypatch.setenv("XUMTEST_PLAIN", "two")
    monkeypatch.setenv("XUMTEST_API_KEY", "sk-second\n")
    assert without_own_secrets(os.environ)["XUMTEST_PLAIN"] == "two"
    assert known_values()["XUMTEST_API_KEY"] == "sk-second"
    # Gone, and new ones.
    monkeypatch.delenv("XUMTEST_API_KEY")
    os.environ.update({"XUMTEST_OTHER_AUTH_TOKEN": "tok", "XUMTEST_MORE": "m"})
    try:
        env = without_own_secrets(os.environ)
        found = known_values()
        assert "XUMTEST_API_KEY" not in found and found["XUMTEST_OTHER_AUTH_TOKEN"] == "tok"
        assert env["XUMTEST_MORE"] == "m" and "XUMTEST_OTHER_AUTH_TOKEN" not in env
    finally:
        del os.environ["XUMTEST_OTHER_AUTH_TOKEN"], os.environ["XUMTEST_MORE"]
    assert "XUMTEST_OTHER_AUTH_TOKEN" not in known_values()
    assert "XUMTEST_MORE" not in without_own_secrets(os.environ)


def test_each_caller_gets_its_own_dict(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XUMTEST_PLAIN", "one")
    monkeypatch.setenv("XUMTEST_API_KEY", "sk-first")
    env = without_own_secrets(os.environ)
    env["XUMTEST_PLAIN"] = "changed by a caller"
    env["XUMTEST_API_KEY"] = "a project secret of the same name"
    found = known_values()
    found["XUMTEST_API_KEY"] = "changed"
    assert without_own_secrets(os.environ)["XUMTEST_PLAIN"] == "one"
    assert "XUMTEST_API_KEY" not in without_own_secrets(os.environ)
    assert known_values()["XUMTEST_API_KEY"] == "sk-first"


def test_a_mapping_other_than_the_environment_is_filtered_as_given() -> None:
    given = {"A_API_KEY": " k ", "B": "b"}
    assert without_own_secrets(given) == {"B": "b"}
    assert known_values(given)["A_API_KEY"] == "k"
