"""Editing one of xum's JSONC files in place from the API, comments and layout kept.

The edit runs under the file's own lock (the one the CLI and other servers take), the result is
checked the way xum would read it before it replaces the file, and a symlinked file (dotfiles)
stays a link: its target is what gets written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from xum.core.errors import ConfigError
from xum.core.fsutil import atomic_write_bytes
from xum.core.lock import locked
from xum.core.paths import ensure_root
from xum.server.errors import ApiError

if TYPE_CHECKING:
    from xum.server.jsonc_edit import JsoncDocument


def edit_config_file(
    path: Path,
    edit: Callable[[JsoncDocument], str],
    check: Callable[[str], None],
    *,
    purpose: str,
) -> bool:
    """Apply `edit(document) -> new text` to `path`; `check(new_text)` raises when the result
    would not be a valid file (nothing is written then). False when the text stays the same."""
    from xum.server.jsonc_edit import JsoncDocument, JsoncEditError

    ensure_root()
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path.with_name(path.name + ".lock"), purpose=purpose):
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = ""
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read: {exc}", path=str(path)) from None
        try:
            new_text = edit(JsoncDocument(text, path=str(path)))
        except JsoncEditError as exc:
            raise ApiError(
                422,
                "config_error",
                f"{path}: cannot be edited in place ({exc.message}); it was not changed",
                "edit the file by hand",
            ) from None
        if new_text == text:
            return False
        check(new_text)
        atomic_write_bytes(path.resolve(), new_text.encode("utf-8"), mode=0o600)
        return True
