"""The generated server token is kept across restarts of one `$XUM_ROOT`: a 0600 file in a
0700 directory, made again whenever it is missing or cannot be trusted, and a token of the
user's own always wins over it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from xum.server.auth import resolve_token
from xum.server.token_store import stored_token, token_path


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def generated() -> str:
    choice = resolve_token(no_auth=False, auth_token=None, env={})
    assert choice.source == "generated" and choice.token is not None
    return choice.token


def test_the_generated_token_is_kept_private_and_reused(xum_root: Path) -> None:
    first = generated()
    path = token_path()
    assert path.parent == xum_root / "server"
    assert mode(path.parent) == 0o700
    assert mode(path) == 0o600
    assert path.read_text().strip() == first
    assert generated() == first  # a restart on the same root: same token, sessions live on


def test_a_missing_file_gives_a_new_token(xum_root: Path) -> None:
    first = generated()
    token_path().unlink()
    second = generated()
    assert second != first and len(second) >= 40
    assert token_path().read_text().strip() == second


@pytest.mark.parametrize(
    "spoil",
    [
        lambda p: p.chmod(0o644),  # others could read it
        lambda p: p.write_text("short\n"),  # not a token xum wrote
        lambda p: p.write_bytes(b"\xff" * 50),
        lambda p: p.write_text(""),
    ],
    ids=["world-readable", "not-a-token", "binary", "empty"],
)
def test_a_file_that_cannot_be_trusted_is_replaced(xum_root: Path, spoil: object) -> None:
    first = generated()
    path = token_path()
    spoil(path)  # type: ignore[operator]
    second = generated()
    assert second != first
    assert mode(path) == 0o600 and path.read_text().strip() == second


def test_a_symlink_is_not_followed(xum_root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "planted"
    elsewhere.write_text("A" * 43 + "\n")
    elsewhere.chmod(0o600)
    path = token_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.symlink(elsewhere, path)
    token = generated()
    assert token != "A" * 43  # a planted file chosen by someone else is not the token
    assert not path.is_symlink() and path.read_text().strip() == token
    assert elsewhere.read_text() == "A" * 43 + "\n"  # and it was not written through


def test_a_loose_directory_is_tightened(xum_root: Path) -> None:
    generated()
    token_path().parent.chmod(0o755)
    generated()
    assert mode(token_path().parent) == 0o700


def test_a_token_of_the_users_own_wins_and_nothing_is_written(xum_root: Path) -> None:
    env = {"XUM_SERVER_AUTH_TOKEN": "mine-from-env"}
    assert resolve_token(no_auth=False, auth_token=None, env=env).token == "mine-from-env"
    assert resolve_token(no_auth=False, auth_token="flag", env={}).token == "flag"
    assert resolve_token(no_auth=True, auth_token=None, env={}).token is None
    assert not token_path().exists()
    # With the stored one present, the environment still wins.
    kept = stored_token()
    assert resolve_token(no_auth=False, auth_token=None, env=env).token == "mine-from-env"
    assert generated() == kept
