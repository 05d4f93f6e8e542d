"""Reading one reply's body under its limits, and saying what came back when it is not a reply.

`BodyReader` wraps the response of one attempt: it bounds the wait for the headers and for
each chunk by the attempt's `ReplyClock` (idle timer and reply deadline), counts the bytes
against the reply's size cap, and keeps the first bytes so an error can quote them. What counts
as progress for the idle timer is the caller's call (`progress`, `keepalive`, `trickle`): only
the wire loop knows whether a chunk completed an event.

An event stream is read through `sse_chunks`, which also says when the reply has been silent
for a quarter of the idle timeout (`Stalled`). To say so without giving up the read in flight,
a pump task reads the body into a small queue and the reader waits on the queue: a timeout
that cancelled the read itself would close the body's iterator, a wait on a queue is safe to
cancel.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Mapping
from typing import Any, Literal, TypeVar

from xum.llm.common import loads
from xum.llm.errors import ErrorContext, LLMError, classify, invalid_response, payload_fields
from xum.llm.limits import MIB, ReplyClock, ReplyLimits, setting_name
from xum.llm.retry import parse_retry_after
from xum.llm.types import Stalled

T = TypeVar("T")
PREVIEW_BYTES = 160  # how much of an unexpected body an error quotes
PUMP_DEPTH = 64  # chunks the pump reads ahead of the reader (bounds memory, keeps it busy)
BodyKind = Literal["json", "sse"]
_SSE_STARTS = (b"data:", b"event:", b":", b"id:", b"retry:")


class BodyReader:
    """The clock, the size cap and the first bytes of one attempt's reply."""

    __slots__ = (
        "_ctx",
        "_limits",
        "_loop",
        "_streamed",
        "began",
        "clock",
        "head",
        "received",
        "waiting_for",
    )

    def __init__(self, limits: ReplyLimits, ctx: ErrorContext, *, streamed: bool) -> None:
        self._loop = asyncio.get_running_loop()
        self._streamed = streamed
        self._limits = limits
        self._ctx = ctx
        self.clock = ReplyClock(limits, self._loop.time())
        self.head = b""  # the first PREVIEW_BYTES of the body
        self.received = 0
        self.waiting_for: Literal["headers", "body"] = "headers"
        self.began = False  # a whole event of the reply arrived (not only headers, keep-alives)

    async def bounded(self, step: Awaitable[T]) -> T:
        """`step` (sending the request and reading the headers) within the clock."""
        result = await self._within(step)
        self.waiting_for = "body"
        self.clock.progress(self._loop.time())
        return result

    async def read(self, raw: AsyncIterator[bytes]) -> bytes:
        """The next chunk of `raw` (b"" at its end), the wait bounded by the clock and the total
        by the size cap."""
        return self._count(await self._within(_next(raw)))

    async def sse_chunks(
        self, raw: AsyncIterator[bytes], first: bytes | None = None
    ) -> AsyncGenerator[bytes | Stalled, None]:
        """`first` (a chunk already read, if any), then the rest of `raw` like `chunks`, with a
        `Stalled` advisory between two chunks when the reply has made no progress for a quarter
        of the idle timeout (a stall right after the headers included)."""
        queue: asyncio.Queue[bytes | BaseException] = asyncio.Queue(PUMP_DEPTH)
        pump = self._loop.create_task(_pump(raw, queue))
        try:
            chunk = first if first is not None else await self._take(queue)
            while chunk:
                yield chunk
                chunk = await self._take(queue)
        finally:
            # The pump must be done with `raw` before anyone closes it.
            pump.cancel()
            await asyncio.wait((pump,))
            if not pump.cancelled():
                pump.exception()  # retrieved: what it met after the end is of no interest

    async def _take(self, queue: asyncio.Queue[bytes | BaseException]) -> bytes | Stalled:
        """The pump's next chunk (b"" at the end) within the clock, or `Stalled` when the
        advisory comes due first (the pump reads on)."""
        if queue.empty():
            now = self._loop.time()
            limit = self.clock.wait(now)
            notice = self.clock.notice_in(now)
            advise = notice is not None and notice < limit
            timeout = asyncio.timeout(notice if advise else limit)
            try:
                async with timeout:
                    item = await queue.get()  # cancelled by the timeout, nothing is lost
            except TimeoutError:
                if not timeout.expired():
                    raise
                if not advise:
                    raise self._timed_out() from None
                self.clock.noticed = True
                silent = self.clock.silent_for(self._loop.time())
                return Stalled(silent_s=silent, idle_s=self._limits.idle_s, began=self.began)
        else:
            item = queue.get_nowait()
        if isinstance(item, BaseException):
            raise item
        return self._count(item)

    def _count(self, chunk: bytes) -> bytes:
        self.received += len(chunk)
        cap = self._limits.max_reply_bytes
        if self.received > cap:
            raise LLMError(
                "invalid_response",
                f"the reply from {self._ctx.provider} is larger than {cap // MIB} MiB, "
                "more than any model reply should be; xum stopped reading it",
                provider=self._ctx.provider,
                hint=f"raise {setting_name('max_reply_bytes')} in config.json if "
                "this server really sends replies that large",
            )
        if len(self.head) < PREVIEW_BYTES:
            self.head += chunk[: PREVIEW_BYTES - len(self.head)]
        return chunk

    async def chunks(
        self, raw: AsyncIterator[bytes], first: bytes = b"", *, all_progress: bool = False
    ) -> AsyncGenerator[bytes, None]:
        """`first` (a chunk already read, if any), then the rest of `raw` through `read`. With
        `all_progress` every chunk resets the idle timer (a JSON body has no keep-alives)."""
        chunk = first or await self.read(raw)
        while chunk:
            if all_progress:
                self.progress()
            yield chunk
            chunk = await self.read(raw)

    def progress(self, *, event: bool = False) -> None:
        """Something that counts arrived; `event`: a whole event of the reply."""
        self.clock.progress(self._loop.time())
        if event:
            self.began = True

    def keepalive(self) -> None:
        self.clock.keepalive()

    def trickle(self, size: int) -> None:
        """`size` bytes of an event that has not ended (not progress)."""
        self.clock.trickle(size)

    async def _within(self, step: Awaitable[T]) -> T:
        # A reply asked for whole sends its headers only when it is done: only the reply
        # deadline bounds that wait.
        idle = self._streamed or self.waiting_for == "body"
        timeout = asyncio.timeout(self.clock.wait(self._loop.time(), idle=idle))
        try:
            async with timeout:
                return await step
        except TimeoutError:
            if not timeout.expired():
                raise
            raise self._timed_out() from None

    def _timed_out(self) -> LLMError:
        ctx, limits = self._ctx, self._limits
        if self.clock.reply_expired():
            what = (
                f"the reply from {ctx.provider} took longer than {limits.reply_s:g} s, "
                "the limit for one reply"
            )
            setting = setting_name("reply_s")
        elif self.waiting_for == "headers":
            what = (
                f"{ctx.provider} at {ctx.base_url} sent no reply within {limits.idle_s:g} s "
                "(not even the response headers)"
            )
            setting = setting_name("idle_s")
        else:
            idle = f"{limits.idle_s:g} s"
            if self.clock.trickled:
                sent = (
                    f"sent only {self.clock.trickled} bytes in {idle}, not one whole event "
                    "(the stream trickles)"
                )
            elif self.clock.keepalives:
                sent = f"sent only keep-alives for {idle}"
            else:
                sent = f"sent nothing for {idle}"
            when = (
                "in the middle of the reply"
                if self.began
                else "after its response headers, before the reply began"
            )
            what = f"{ctx.provider} {sent} {when}"
            setting = setting_name("idle_s")
        return LLMError(
            "timeout",
            what,
            provider=ctx.provider,
            hint=f"if the model needs longer, raise {setting} in config.json (docs/providers.md)",
        )


async def _pump(raw: AsyncIterator[bytes], queue: asyncio.Queue[bytes | BaseException]) -> None:
    """Move `raw`'s chunks into `queue`, then b"" at its end or the exception that ended it."""
    try:
        async for chunk in raw:
            await queue.put(chunk)
    except Exception as exc:
        await queue.put(exc)
        return
    await queue.put(b"")


async def _next(raw: AsyncIterator[bytes]) -> bytes:
    """The next chunk, b"" at the end (a coroutine `_within` can bound)."""
    try:
        return await anext(raw)
    except StopAsyncIteration:
        return b""


def body_kind(content_type: str, first: bytes) -> BodyKind | None:
    """How to read a 200 reply: by its content type, else by its first bytes; None when it is
    neither JSON nor an event stream (an HTML page, plain text, nothing)."""
    ctype = content_type.lower()
    if "json" in ctype:
        return "json"
    if "event-stream" in ctype:
        return "sse"
    start = first.lstrip()
    if start[:1] in (b"{", b"["):
        return "json"
    if start.startswith(_SSE_STARTS):
        return "sse"
    return None


def unexpected_body(
    ctx: ErrorContext, status: int, content_type: str, head: bytes, *, expected: str
) -> LLMError:
    """A reply that is not one: say what came back, and do not retry it (it will not change)."""
    ctype = content_type.split(";", 1)[0].strip() or "no content type"
    if not head.strip():
        body = "an empty body"
    else:
        text = " ".join(head.decode("utf-8", "replace").split())
        body = f"a body that is not {expected}, beginning {ctx.scrub(text)!r}"
    return LLMError(
        "invalid_response",
        f"{ctx.provider} at {ctx.base_url} answered HTTP {status} ({ctype}) with {body}",
        provider=ctx.provider,
        status=status,
        retryable=False,
        hint=(
            "check that baseUrl points at the provider's API (OpenAI-compatible servers usually "
            "serve it under /v1) and not at a web page, a login page or a proxy that rewrites "
            "replies"
        ),
    )


async def read_some(chunks: AsyncIterator[bytes], limit: int) -> bytes:
    buf = bytearray()
    async for chunk in chunks:
        buf += chunk
        if len(buf) >= limit:
            break
    return bytes(buf[:limit])


def json_body(ctx: ErrorContext, raw: bytes) -> Any:
    try:
        obj = loads(raw)
    except ValueError as exc:
        raise invalid_response(ctx, f"the reply body is not JSON ({exc})") from exc
    if isinstance(obj, dict) and obj.get("error") and not obj.get("choices"):
        codes, message = payload_fields(obj)
        raise classify(ctx, status=None, codes=codes, detail=message)
    return obj


def http_error(ctx: ErrorContext, status: int, headers: Mapping[str, str], raw: bytes) -> LLMError:
    codes: set[str] = set()
    detail = ""
    try:
        codes, detail = payload_fields(loads(raw))
    except ValueError:
        detail = raw.decode("utf-8", "replace").strip()
        if detail.lstrip().startswith("<"):  # an HTML error page from a proxy says nothing useful
            detail = ""
    should = headers.get("x-should-retry")
    should_retry = True if should == "true" else False if should == "false" else None
    return classify(
        ctx,
        status=status,
        codes=codes,
        detail=detail,
        retry_after=parse_retry_after(headers),
        should_retry=should_retry,
    )
