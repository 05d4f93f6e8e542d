"""Running the tool calls of one step.

Consecutive read-only calls run concurrently; anything that writes or runs commands runs alone,
in the order the model asked. Middleware sees every call before and after it runs. Whatever
happens (a blocked call, a crash, bad arguments, a middleware that raises) each call ends with
exactly one result.

Each call gets its own frozen context (`context_for(call)`), and a middleware's change to it
(a returned `ToolContext`) is threaded through that call's remaining layers and its tool only,
so calls that run side by side cannot see each other's changes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable, Sequence

from xum.engine.extensions import ToolCall, ToolMiddleware
from xum.tools import registry
from xum.tools.base import ToolContext, ToolResult, error

# A last line of defence: tools bound their own output, but a result bigger than this is cut.
MAX_RESULT_CHARS = 200_000

# Awaited in call order; the engine records each result durably before the next one.
ResultHandler = Callable[[ToolCall, ToolResult, float], Awaitable[None]]
# The fresh context of one call (called once per call, when the call's group starts).
ContextFor = Callable[[ToolCall], ToolContext]


def _bounded(result: ToolResult) -> ToolResult:
    if len(result.output) <= MAX_RESULT_CHARS:
        return result
    half = MAX_RESULT_CHARS // 2
    omitted = len(result.output) - 2 * half
    return dataclasses.replace(
        result,
        output=(
            result.output[:half]
            + f"\n[... {omitted:,} characters omitted by xum: the result was too long ...]\n"
            + result.output[-half:]
        ),
        meta={**result.meta, "truncated_chars": omitted},
    )


def _is_read_only(name: str) -> bool:
    try:
        return registry.is_read_only(name)
    except KeyError:
        return False


def _layer_name(layer: ToolMiddleware) -> str:
    return type(layer).__name__


def _failed_before(call: ToolCall, layer: ToolMiddleware, exc: Exception) -> ToolResult:
    return error(
        f"{call.name} was not run: the {_layer_name(layer)} step that checks each call before "
        f"it runs failed ({type(exc).__name__}: {exc}). The call itself may be fine; this is a "
        "problem in xum's setup (a hook or extension), which the user has to fix.",
        middleware_error=_layer_name(layer),
        stage="before",
    )


def _failed_after(call: ToolCall, layer: ToolMiddleware, exc: Exception) -> ToolResult:
    # The output is withheld: a layer after the call may be the one that masks secrets.
    return error(
        f"{call.name} ran, but the {_layer_name(layer)} step that processes each result failed "
        f"({type(exc).__name__}: {exc}), so its output is withheld. Check what the call did "
        "(for example with file_read or `git status`) before repeating it.",
        middleware_error=_layer_name(layer),
        stage="after",
    )


async def run_one(
    call: ToolCall,
    ctx: ToolContext,
    offered: Sequence[str],
    middleware: Sequence[ToolMiddleware],
) -> ToolResult:
    """One call through the middleware and the tool. A middleware that raises becomes an error
    result (cancellation still goes through). `ctx` must be this call's own context."""
    result, _seconds = await run_timed(call, ctx, offered, middleware)
    return result


async def run_timed(
    call: ToolCall,
    ctx: ToolContext,
    offered: Sequence[str],
    middleware: Sequence[ToolMiddleware],
) -> tuple[ToolResult, float]:
    """`run_one`, with how long the call ran: from when the checks before it let it through to
    its result. A wait in those checks (a person's approval) is not the call's run time, so it
    is left out; a call they refused ran for 0 s."""
    for layer in middleware:
        try:
            outcome = await layer.before_tool(call, ctx)
        except Exception as exc:
            return _failed_before(call, layer, exc), 0.0
        if isinstance(outcome, ToolContext):
            ctx = outcome
        elif outcome is not None:
            return _bounded(outcome), 0.0
    started = time.monotonic()
    result = await registry.validate_and_run(call.name, call.arguments, ctx, available=offered)
    for layer in middleware:
        try:
            result = await layer.after_tool(call, result, ctx)
        except Exception as exc:
            return _failed_after(call, layer, exc), time.monotonic() - started
    return _bounded(result), time.monotonic() - started


async def run_calls(
    calls: Sequence[ToolCall],
    context_for: ContextFor,
    *,
    offered: Sequence[str],
    middleware: Sequence[ToolMiddleware],
    on_start: Callable[[ToolCall], None],
    on_result: ResultHandler,
) -> None:
    """Run `calls`, each with its own context from `context_for`; `on_result(call, result,
    seconds)` fires in call order as results settle (`seconds`: see `run_timed`)."""
    i = 0
    while i < len(calls):
        group = [calls[i]]
        if _is_read_only(calls[i].name):
            while i + len(group) < len(calls) and _is_read_only(calls[i + len(group)].name):
                group.append(calls[i + len(group)])
        i += len(group)
        for call in group:
            on_start(call)
        if len(group) == 1:
            result, seconds = await run_timed(group[0], context_for(group[0]), offered, middleware)
            await on_result(group[0], result, seconds)
            continue
        contexts = [context_for(c) for c in group]
        timed = await asyncio.gather(
            *(run_timed(c, x, offered, middleware) for c, x in zip(group, contexts, strict=True))
        )
        for call, (result, seconds) in zip(group, timed, strict=True):
            await on_result(call, result, seconds)
