"""`xum_root` and the paths under it are kept between calls, yet follow `$XUM_ROOT` and `$HOME`
as soon as either changes (tests and embedders change them within one process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from xum.core import paths


def test_root_and_its_files_follow_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XUM_ROOT", str(tmp_path / "a"))
    assert paths.xum_root() == tmp_path / "a"
    assert paths.config_path() == tmp_path / "a" / "config.json"
    assert paths.config_path() is paths.config_path()  # kept, not rebuilt

    monkeypatch.setenv("XUM_ROOT", str(tmp_path / "b"))
    assert paths.config_path() == tmp_path / "b" / "config.json"
    assert paths.secrets_path() == tmp_path / "b" / "secrets.json"
    assert paths.server_token_path() == tmp_path / "b" / "server" / "auth-token"

    monkeypatch.delenv("XUM_ROOT")
    monkeypatch.setenv("HOME", str(tmp_path / "home1"))
    assert paths.xum_root() == tmp_path / "home1" / ".xum"
    monkeypatch.setenv("HOME", str(tmp_path / "home2"))
    assert paths.server_lock_path() == tmp_path / "home2" / ".xum" / "server.lock"

    monkeypatch.setenv("XUM_ROOT", "~/elsewhere")  # expanded against the HOME of now
    assert paths.providers_path() == tmp_path / "home2" / "elsewhere" / "providers.jsonc"
    monkeypatch.setenv("HOME", str(tmp_path / "home3"))
    assert paths.xum_root() == tmp_path / "home3" / "elsewhere"
