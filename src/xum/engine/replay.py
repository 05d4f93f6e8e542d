"""Reading a session log back as the exact requests its steps sent. (Its events: see
`xum.engine.derive`.)

Every step is on record: its `step_start` frame (with the forced `tool_choice`, if any) and, when
anything that shapes a request changed since the previous step, a `request_header` frame with the
model, thinking level, output limit, parameters, cache key and the system prompt and tools (or
the `context_frozen` frame holding them). With the history projected from the frames before the
step, that is the whole request: `rebuild_requests` puts it back together.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from xum.engine.native_search import from_header, header_value, native_search
from xum.llm.types import LLMRequest, ToolSpec
from xum.store import frame_types as ev
from xum.store.frames import Frame
from xum.store.projection import HistoryProjection

# The request_header fields that say how a request was shaped (besides the prompt and tools'
# texts); a new header is written whenever one of them changes.
SHAPE_FIELDS = (
    "system_sha256",
    "tools_sha256",
    "model",
    "model_id",
    "thinking",
    "max_output_tokens",
    "params",
    "cache_key",
    "cache",
    "web_search",
)


def request_shape(
    request: LLMRequest, model_string: str, tools_sha256: str
) -> ev.RequestHeaderData:
    """The header fields of `request`; `tools_sha256` is passed in because the engine keeps it."""
    shape: ev.RequestHeaderData = {
        "system_sha256": hashlib.sha256(request.system.encode()).hexdigest(),
        "tools_sha256": tools_sha256,
        "model": model_string,
        "model_id": request.model,
        "thinking": request.thinking,
        "max_output_tokens": request.max_output_tokens,
        "params": request.params,
        "cache_key": request.cache_key,
        "cache": request.cache,
    }
    native = header_value(request.web_search)
    if native is not None:  # only then: headers of requests without it stay as they were
        shape["web_search"] = native
    return shape


def header_key(data: Mapping[str, Any]) -> bytes:
    """What two headers must share to describe the same request shape."""
    return orjson.dumps([data.get(name) for name in SHAPE_FIELDS])


@dataclass(frozen=True)
class StepRequest:
    """One step's request as the log records it."""

    seq: int | None  # the step_start frame
    turn_id: str
    step: int
    model: str  # `provider:model-id`: the provider (and so the wire) it went to
    request: LLMRequest


def rebuild_requests(frames: Iterable[Frame]) -> list[StepRequest]:
    """The request of every step in the log, in the order they were sent. Encoding one with a
    client for its provider (`LLMClient.request_body`) gives the bytes that were posted. Raises
    ValueError for a step with no request_header before it (a log from before headers)."""
    history = HistoryProjection()
    frozen: dict[int, dict[str, Any]] = {}
    header: dict[str, Any] | None = None
    step: tuple[Frame, list[Any]] | None = None  # a step_start whose header may follow it
    out: list[StepRequest] = []
    for frame in frames:
        if not frame.damaged:
            if frame.type == ev.CONTEXT_FROZEN and frame.seq is not None:
                frozen[frame.seq] = frame.data
            elif frame.type == ev.REQUEST_HEADER:
                header = frame.data  # written right after the step_start it belongs to
            if step is not None:
                out.append(_step_request(*step, header, frozen))
                step = None
            if frame.type == ev.STEP_START:
                step = (frame, list(history.messages()))
        history.feed([frame])
    if step is not None:
        out.append(_step_request(*step, header, frozen))
    return out


def rebuild_request(frames: Sequence[Frame], turn_id: str, step: int) -> LLMRequest:
    """The request step `step` (1-based) of turn `turn_id` sent."""
    for recorded in rebuild_requests(frames):
        if (recorded.turn_id, recorded.step) == (turn_id, step):
            return recorded.request
    raise ValueError(f"the log has no step {step} in turn {turn_id}")


def _step_request(
    frame: Frame,
    messages: list[Any],
    header: dict[str, Any] | None,
    frozen: dict[int, dict[str, Any]],
) -> StepRequest:
    if header is None:
        raise ValueError(
            f"step_start frame {frame.seq} has no request_header before it: the log predates "
            "request headers, so this step's request cannot be rebuilt"
        )
    start = ev.payload(frame, ev.STEP_START)
    texts = header
    if "frozen_seq" in header:
        texts = frozen.get(header["frozen_seq"], {})
        if "system" not in texts:
            raise ValueError(
                f"request_header points at context_frozen frame {header['frozen_seq']}, which "
                "is missing or damaged"
            )
    tools, native = native_search(
        [ToolSpec(t["name"], t["description"], t["parameters"]) for t in texts["tools"]],
        from_header(header.get("web_search")),
    )
    request = LLMRequest(
        model=header.get("model_id") or str(header.get("model", "")).partition(":")[2],
        system=texts["system"],
        messages=messages,
        tools=tools,
        thinking=header.get("thinking", "off"),
        max_output_tokens=header.get("max_output_tokens"),
        tool_choice=start.get("tool_choice"),
        cache_key=header.get("cache_key"),
        params=header.get("params") or {},
        cache=header.get("cache", True),
        web_search=native,
    )
    return StepRequest(
        frame.seq,
        str(start.get("turn_id", "")),
        int(start.get("step", 0)),
        str(header.get("model", "")),
        request,
    )
