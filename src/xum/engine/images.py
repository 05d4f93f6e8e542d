"""Which models take images, and the refusal for one that does not.

The built-in catalog has a per-family rule (`xum.llm.catalog.takes_images`); `imageInput` in
`$XUM_ROOT/config.json` (model string -> true/false) overrides it for a model the rule gets
wrong (a local vision model, a proxy). A message with images for a model that does not take
them is refused before anything is written or sent, never left to the provider's 400.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from xum.core.errors import UsageError
from xum.core.images import ImagePart, check_count
from xum.engine.route import ModelRoute
from xum.llm.catalog import takes_images
from xum.store.blobs import SessionBlobs

IMAGE_INPUT_KEY: Final = "imageInput"


def image_input(route: ModelRoute, config: Mapping[str, Any] | None = None) -> bool:
    """Whether `route`'s model is sent images."""
    if config is None:
        from xum.store.config import read_config

        config = read_config()
    table = config.get(IMAGE_INPUT_KEY)
    override = table.get(route.model_string) if isinstance(table, Mapping) else None
    if isinstance(override, bool):
        return override
    return takes_images(route.provider, route.model_id)


def check_images(route: ModelRoute, images: Sequence[ImagePart]) -> None:
    """UsageError when `images` cannot go to `route`'s model (too many, or no image input)."""
    if not images:
        return
    check_count(len(images))
    if not image_input(route):
        raise UsageError(
            f"{route.model_string} does not take images",
            hint="switch to a model that does (Claude, GPT, Gemini), or set "
            f'"{IMAGE_INPUT_KEY}": {{"{route.model_string}": true}} in config.json '
            "if it does",
        )


class ImageSources:
    """Where a session's requests read stored images, for the model of the moment: the session's
    blobs for a model that takes images, else None (images in the history then go as text
    placeholders). Decided once per model."""

    def __init__(self, workspace_id: str) -> None:
        self._workspace_id = workspace_id
        self._decided: tuple[str, SessionBlobs | None] | None = None

    def for_route(self, route: ModelRoute) -> SessionBlobs | None:
        if self._decided is None or self._decided[0] != route.model_string:
            source = SessionBlobs(self._workspace_id) if image_input(route) else None
            self._decided = (route.model_string, source)
        return self._decided[1]
