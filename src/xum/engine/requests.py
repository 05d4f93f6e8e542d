"""The request each step sends, and the frames that put it on record.

A request is the projected history plus the segment's frozen system prompt and tools (see
`xum.engine.contextsync`), with the session's model settings. Every step is on record: its
`step_start` frame (with a forced `tool_choice`, if any) and, when anything that shapes a request
changed since the previous step, a `request_header` frame (`xum.engine.replay` reads both back to
rebuild the request byte for byte). Those frames are written together with the step's reply, or
with the turn's end when the step produced none, so every request sent is on record and none
that was not sent is.
"""

from __future__ import annotations

import os
from typing import Any

import orjson

from xum.context.frozen import Frozen
from xum.core.paths import ensure_private_dir, logs_dir
from xum.engine.replay import header_key, request_shape
from xum.llm.types import LLMRequest
from xum.store import frame_types as ev

FrameSpec = ev.FrameSpec


class StepRecords:
    """The on-record state of requests: the last header written, and the frames of the step in
    flight until they are appended."""

    def __init__(self, last_header_key: bytes | None) -> None:
        self._header_key = last_header_key
        self.pending: list[FrameSpec] = []
        self._pending_key: bytes | None = None

    def start_step(
        self,
        turn_id: str,
        step: int,
        request: LLMRequest,
        *,
        model_string: str,
        tools_sha256: str,
        frozen: Frozen,
    ) -> None:
        """Prepare this step's `step_start` (and `request_header` when the shape changed)."""
        start: ev.StepStartData = {"turn_id": turn_id, "step": step}
        if request.tool_choice is not None:
            start["tool_choice"] = request.tool_choice
        self.pending = [ev.spec(ev.STEP_START, start)]
        self._pending_key = None
        shape = request_shape(request, model_string, tools_sha256)
        key = header_key(shape)
        if key == self._header_key:
            return
        header = shape.copy()
        if (frozen.system_sha256, frozen.tools_sha256) == (
            shape["system_sha256"],
            shape["tools_sha256"],
        ):
            # The texts are in the segment's context_frozen frame already; point at it.
            header["frozen_seq"] = frozen.seq
        else:
            header["system"] = request.system
            header["tools"] = [
                {"name": t.name, "description": t.description, "parameters": t.parameters}
                for t in request.tools
            ]
        self.pending.append(ev.spec(ev.REQUEST_HEADER, header))
        self._pending_key = key

    def take(self) -> list[FrameSpec]:
        """The in-flight step's frames, for the append that records them (then `recorded`)."""
        return self.pending

    def recorded(self) -> None:
        """Those frames were appended: remember the header they carried."""
        if self._pending_key is not None:
            self._header_key = self._pending_key
        self.pending, self._pending_key = [], None

    def clear(self) -> None:
        self.pending, self._pending_key = [], None


def debug_requested() -> bool:
    return os.environ.get("XUM_DEBUG_LLM_REQUEST") == "1"


def debug_record(
    request: LLMRequest,
    *,
    workspace_id: str,
    model: str,
    mode: str,
    agent: str,
    offered: list[str],
) -> dict[str, Any]:
    """The whole request as the debug log records it (never a key: keys are not in requests)."""
    return {
        "workspaceId": workspace_id,
        "model": model,
        "systemMessage": request.system,
        "messages": request.messages,
        "tools": [
            {"name": t.name, "description": t.description, "inputSchema": t.parameters}
            for t in request.tools
        ],
        "providerOptions": {"thinking": request.thinking, "params": request.params},
        "mode": mode,
        "agent": agent,
        "toolChoice": request.tool_choice,
        "thinkingLevel": request.thinking,
        "maxOutputTokens": request.max_output_tokens,
        "toolPolicy": offered,
    }


def write_debug_request(record: dict[str, Any]) -> None:
    """XUM_DEBUG_LLM_REQUEST=1: append the whole request (never a key) to the debug log."""
    path = ensure_private_dir(logs_dir()) / "llm-requests.log"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, orjson.dumps(record, option=orjson.OPT_INDENT_2) + b"\n")
    finally:
        os.close(fd)
