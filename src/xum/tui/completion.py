"""What the composer offers at the cursor: the workspace's slash commands after a leading `/`,
and the workspace's file paths after `@` (docs/tui.md, Composer).

Slash commands come from the front-end (`Actions.slash_suggestions`: the host's table, or the
server's when attached) and are kept per workspace; file paths come from a background index of
the checkout on this machine (`paths.PathIndex`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

from xum.tui.composer import Suggestion
from xum.tui.paths import PathIndex
from xum.tui.runner import Workspace

SlashSource = Callable[[Workspace | None], Awaitable[list[Suggestion]]]


class Completion:
    def __init__(
        self,
        *,
        project_root: Callable[[], Path],
        selected: Callable[[], Workspace | None],
        slash: SlashSource,
        run: Callable[[Coroutine[Any, Any, None]], object],
        refresh: Callable[[], None],
        focused: Callable[[], bool],
    ) -> None:
        """`run` starts a coroutine beside the UI; `refresh` redraws the open suggestions;
        `focused`: whether the composer has the focus (a finished index is offered at once)."""
        self._project_root, self._selected, self._slash_source = project_root, selected, slash
        self._run, self._refresh, self._focused = run, refresh, focused
        self.paths = PathIndex(self._paths_ready)
        self.slash_cache: dict[str, list[Suggestion]] = {}

    def complete(self, text: str, offset: int) -> tuple[int, list[Suggestion]]:
        if text.startswith("/"):
            first = len(text.split(None, 1)[0]) if text.strip() else 1
            if 1 <= offset <= first:
                return 0, self._slash(text[:offset])
        start = offset
        while start > 0 and not text[start - 1].isspace():
            start -= 1
        word = text[start:offset]
        if word.startswith("@"):
            root = self.files_root()
            return start, [
                Suggestion(f"@{path} ", path) for path in self.paths.matches(root, word[1:])
            ]
        return 0, []

    def files_root(self) -> Path:
        ws = self._selected()
        if ws is None or ws.record.runtime in ("ssh", "docker"):
            return self._project_root()
        return Path(ws.record.path)

    def forget(self, workspace_id: str) -> None:
        self.slash_cache.pop(workspace_id, None)

    def _slash(self, typed: str) -> list[Suggestion]:
        ws = self._selected()
        key = ws.id if ws else ""
        cached = self.slash_cache.get(key)
        if cached is None:
            self._run(self._load_slash(key, ws))
            return []
        return [s for s in cached if s.insert.startswith(typed)]

    async def _load_slash(self, key: str, ws: Workspace | None) -> None:
        self.slash_cache[key] = await self._slash_source(ws)
        self._refresh()

    def _paths_ready(self) -> None:
        if self._focused():
            self._refresh()
