"""Shared fixtures. Every test gets a private $XUM_ROOT and HOME: nothing touches the real ones."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["xum.testing.pytest_plugin"]


@pytest.fixture(autouse=True)
def xum_root(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("home")
    root = home / ".xum"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XUM_ROOT", str(root))
    for var in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_ORG_ID",
        "OPENAI_PROJECT_ID",
        "OPENROUTER_API_KEY",
        "DEEPSEEK_API_KEY",
        "XAI_API_KEY",
        "XAI_BASE_URL",
        "GOOGLE_GENERATIVE_AI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_BASE_URL",
        "MOONSHOT_API_KEY",
        "ZAI_API_KEY",
        "XUM_THINKING_LEVEL",
    ):
        monkeypatch.delenv(var, raising=False)
    yield root
