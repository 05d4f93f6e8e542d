"""One POST per attempt, retries around it, and the stream decoding loop the wires share.

Each wire client subclasses `WireClient` and supplies four things: the request body
(`encode`), its headers, a decoder for the event stream (`new_decoder`) and the frames that a
non-streamed JSON reply stands for (`body_frames`). Everything else lives here once: the
shared `httpx.AsyncClient`, error translation, retries with backoff, cut-off detection and
cancellation.

httpx is imported lazily (about 0.1 s): importing a wire module costs nothing until the first
request.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from xum import __version__
from xum.llm.body import BodyReader, body_kind, http_error, json_body, read_some, unexpected_body
from xum.llm.common import dumps
from xum.llm.endpoint import Endpoint, auth_headers
from xum.llm.errors import ErrorContext, LLMError, invalid_response, network_error
from xum.llm.gate import request_gate
from xum.llm.lean_http import HTTPTransportError, LeanHTTP, LeanTimeouts, request_sent
from xum.llm.limits import PARTIAL_PROGRESS_BYTES, ReplyLimits, setting_name
from xum.llm.params import Withheld, withheld_params
from xum.llm.retry import RetryPolicy
from xum.llm.sse import SSEEvent, SSEParser
from xum.llm.types import (
    Finish,
    LLMRequest,
    Retrying,
    Stalled,
    StreamEvent,
    UsageUpdate,
    Wire,
)

if TYPE_CHECKING:
    import httpx

# Cold start: `prewarm` builds the TLS context for https endpoints on a background thread
# while the caller does its own I/O (git, config, the session log); behind a proxy it also
# imports httpx, which carries that path.
_warm_thread: threading.Thread | None = None
_warm_tls: dict[str, Any] = {}  # "default" -> ssl.SSLContext
# Set once a request is out in this process (written by the lean client; through httpx, behind
# a proxy, when its reply's head arrives): the model is at work. Background work meant to fill
# that wait (the engine's tool prewarm, the sandbox probe) starts then, so it does not compete
# with the first request for the interpreter while that is being prepared.
first_request_sent = request_sent


def prewarm(url: str) -> None:
    """Start loading what the first request to `url` needs; the client waits for it."""
    global _warm_thread
    if _warm_thread is not None:
        return
    https = url.startswith("https://")
    proxied = proxy_for(url) is not None

    def work() -> None:
        if proxied:
            import httpx  # noqa: F401
        else:
            import h11  # noqa: F401  (the lean client's framing)
        if https:
            _warm_tls["default"] = _default_tls()

    _warm_thread = threading.Thread(target=work, name="xum-prewarm", daemon=True)
    _warm_thread.start()


def _default_tls() -> Any:
    import ssl

    return ssl.create_default_context()


def _tls_context() -> Any:
    if _warm_thread is not None:
        _warm_thread.join()
    context = _warm_tls.get("default")
    if context is None:
        context = _warm_tls["default"] = _default_tls()
    return context


def proxy_for(url: str) -> str | None:
    """The proxy the environment asks for `url` (HTTPS_PROXY / HTTP_PROXY / ALL_PROXY minus
    NO_PROXY, either case), or None for a direct connection."""
    env = {k.lower(): v for k, v in os.environ.items() if k.lower().endswith("_proxy") and v}
    scheme, _, rest = url.partition("://")
    proxy = env.get(f"{scheme}_proxy") or env.get("all_proxy")
    if not proxy:
        return None
    host = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    host = (
        host.rsplit(":", 1)[0].strip("[]").lower() if not host.endswith("]") else host.strip("[]")
    )
    for entry in env.get("no_proxy", "").split(","):
        entry = entry.strip().lower()
        if entry == "*" or (
            entry and (host == entry.lstrip(".") or host.endswith("." + entry.lstrip(".")))
        ):
            return None
    return proxy


# The failures that say "too many requests now": the governor pauses the provider for all.
_PAUSING = frozenset({"rate_limit", "overloaded"})
MAX_ERROR_BODY = 64 * 1024  # enough for any error JSON; the rest is not read
DRAIN_S = 2.0  # after the final event, wait this long for the server to end the body
# httpx's own read timeout is a backstop behind the reply clock (`xum.llm.limits`), which is
# the one that decides and says which limit ran out.
TRANSPORT_SLACK_S = 5.0


class StreamDecoder(Protocol):
    """Turns one reply's frames into normalized events; one instance per attempt."""

    @property
    def complete(self) -> bool:
        """The final frame arrived (message_stop, response.completed, [DONE])."""
        ...

    def feed(self, event: str, data: bytes) -> Sequence[StreamEvent]: ...

    def feed_obj(self, event: str, obj: Any) -> Sequence[StreamEvent]: ...

    def finish(self) -> Finish:
        """The Finish event; raises a retryable LLMError when the reply was cut off."""
        ...


class WireClient:
    """Base of the three wire clients (see the module docstring)."""

    wire: ClassVar[Wire]
    path: ClassVar[str]

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        retry: RetryPolicy | None = None,
        limits: ReplyLimits | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.limits = limits = limits or endpoint.limits
        self.retry = retry or RetryPolicy(
            max_retries=limits.max_retries, budget_s=limits.retry_budget_s
        )
        self._transport = transport
        self._http: httpx.AsyncClient | None = None
        self._lean: LeanHTTP | None = None
        # The lean client serves direct connections; httpx serves proxies and custom transports.
        self._use_lean = transport is None and proxy_for(endpoint.base_url) is None
        self.url = endpoint.base_url.rstrip("/") + "/" + self.path

    # Hooks for the wire modules -------------------------------------------------------------

    def encode(self, request: LLMRequest, *, stream: bool = True) -> dict[str, Any]:
        raise NotImplementedError

    def wire_headers(self) -> dict[str, str]:
        return {}

    def new_decoder(self, request: LLMRequest) -> StreamDecoder:
        raise NotImplementedError

    def body_frames(self, obj: Any) -> list[tuple[str, Any]]:
        """The stream frames a complete (non-streamed) JSON reply is equivalent to."""
        raise NotImplementedError

    def withheld_params(self, request: LLMRequest) -> list[Withheld]:
        """The request's known `modelParameters` this wire, provider and model do not take."""
        return withheld_params(
            self.wire, self.endpoint.provider, request.model, request.params, thinking=False
        )

    # Public API -----------------------------------------------------------------------------

    def request_body(self, request: LLMRequest, *, stream: bool = True) -> bytes:
        return dumps(self.encode(request, stream=stream))

    async def stream(
        self, request: LLMRequest, *, stream: bool = True
    ) -> AsyncGenerator[StreamEvent, None]:
        """Normalized events for one reply, ending with `Finish`. Failures that a retry can fix
        are retried (each announced with `Retrying`); anything else raises `LLMError`.
        With `stream=False` the reply is requested whole and replayed as the same events."""
        body = self.request_body(request, stream=stream)
        ctx = self.error_context(request.model)
        policy = self.retry
        loop = asyncio.get_running_loop()
        started = loop.time()
        attempt = 0
        gate = request_gate.get()
        provider = self.endpoint.provider
        while True:
            emitted = False
            # The process's governor (when the host set one) decides when this attempt may go
            # out; its slot is held for the attempt only, never across the retry wait.
            permit = await gate.acquire(provider, request.model) if gate is not None else None
            try:
                async with aclosing(self._attempt(request, body, ctx, stream)) as events:
                    async for event in events:
                        # Usage updates are snapshots that the next attempt replaces and stall
                        # advisories are no content; only deltas leave something for the
                        # consumer to throw away.
                        if not isinstance(event, UsageUpdate | Stalled):
                            emitted = True
                        yield event
                return
            except LLMError as err:
                failure = err
            finally:
                if permit is not None:
                    permit.release()
            retry_after = failure.retry_after
            if gate is not None and failure.retryable and failure.kind in _PAUSING:
                gate.report_rate_limited(provider, request.model, retry_after)
            too_long = retry_after is not None and retry_after > policy.max_retry_after_s
            if not failure.retryable or attempt >= policy.max_retries or too_long:
                raise _final(failure, attempt + 1, retry_after if too_long else None)
            delay = policy.delay(attempt + 1, retry_after)
            if loop.time() - started + delay > policy.budget_s:
                raise _final(failure, attempt + 1, None, budget_s=policy.budget_s)
            attempt += 1
            yield Retrying(
                attempt=attempt, delay_s=delay, reason=_reason(failure), discard_partial=emitted
            )
            await policy.sleep(delay)

    async def complete(self, request: LLMRequest, *, stream: bool = True) -> Finish:
        """Run a request to the end and return its `Finish` (retries included)."""
        finish: Finish | None = None
        async with aclosing(self.stream(request, stream=stream)) as events:
            async for event in events:
                if isinstance(event, Finish):
                    finish = event
        if finish is None:  # pragma: no cover - stream() always ends with Finish or raises
            raise invalid_response(self.error_context(request.model), "the reply had no end")
        return finish

    async def aclose(self) -> None:
        if self._http is not None:
            client, self._http = self._http, None
            await client.aclose()
        if self._lean is not None:
            lean, self._lean = self._lean, None
            await lean.aclose()

    def error_context(self, model: str) -> ErrorContext:
        ep = self.endpoint
        return ErrorContext(ep.provider, model, ep.base_url, ep.key_source, ep.api_key)

    # Internals ------------------------------------------------------------------------------

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            if _warm_thread is not None:
                _warm_thread.join()
            import httpx

            t = self.limits
            self._http = httpx.AsyncClient(
                verify=_tls_context() if self.url.startswith("https://") else False,
                timeout=httpx.Timeout(
                    connect=t.connect_s,
                    read=t.idle_s + TRANSPORT_SLACK_S,
                    write=t.write_s,
                    pool=t.connect_s,
                ),
                limits=httpx.Limits(max_keepalive_connections=16, keepalive_expiry=120.0),
                transport=self._transport,
                http1=True,
                http2=False,
            )
        return self._http

    def _headers(self, stream: bool) -> dict[str, str]:
        ep = self.endpoint
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream" if stream else "application/json",
            "user-agent": f"xum/{__version__}",
        }
        if stream:
            headers["accept-encoding"] = "identity"  # compressed SSE arrives in bursts
        headers.update(auth_headers(ep))
        headers.update(self.wire_headers())
        headers.update(ep.headers)
        return headers

    def _lean_client(self) -> LeanHTTP:
        if self._lean is None:
            t = self.limits
            # No read timer of its own: every wait is bounded by the attempt's reply clock.
            self._lean = LeanHTTP(
                timeouts=LeanTimeouts(connect=t.connect_s, read=None, write=t.write_s),
                tls=_tls_context,
            )
        return self._lean

    @contextlib.asynccontextmanager
    async def _post(self, body: bytes, stream: bool) -> AsyncIterator[_Reply]:
        """One POST on whichever client applies, as a `_Reply`."""
        headers = self._headers(stream)
        if self._use_lean:
            async with self._lean_client().post(self.url, body, headers) as lean:
                yield _Reply(lean.status, lean.headers, lean.aiter_bytes())
            return
        async with self._client().stream("POST", self.url, content=body, headers=headers) as resp:
            first_request_sent.set()
            yield _Reply(resp.status_code, resp.headers, resp.aiter_bytes())

    async def _attempt(
        self, request: LLMRequest, body: bytes, ctx: ErrorContext, stream: bool
    ) -> AsyncGenerator[StreamEvent, None]:
        reading = BodyReader(self.limits, ctx, streamed=stream)
        try:
            async with contextlib.AsyncExitStack() as stack:
                resp = await reading.bounded(stack.enter_async_context(self._post(body, stream)))
                if resp.status >= 300:
                    raw = await read_some(reading.chunks(resp.chunks), MAX_ERROR_BODY)
                    raise http_error(ctx, resp.status, resp.headers, raw)
                decoder = self.new_decoder(request)
                content_type = resp.headers.get("content-type", "")
                first: bytes | None = None  # read here only when the headers do not tell
                if body_kind(content_type, b"") != "sse":
                    first = await reading.read(resp.chunks)
                    kind = body_kind(content_type, first)
                    if kind is None or not first:
                        expected = "an event stream" if stream else "JSON"
                        raise unexpected_body(
                            ctx, resp.status, content_type, first, expected=expected
                        )
                    if kind == "json":
                        # Asked for a stream and got a whole reply (or asked for one): same
                        # events. Closed before the response (the stack unwinds in reverse).
                        chunks = await stack.enter_async_context(
                            aclosing(reading.chunks(resp.chunks, first, all_progress=True))
                        )
                        raw = await read_some(chunks, self.limits.max_reply_bytes)
                        for name, obj in self.body_frames(json_body(ctx, raw)):
                            for event in decoder.feed_obj(name, obj):
                                yield event
                        yield decoder.finish()
                        return
                # An event stream: when the headers said so, even the wait for its first bytes
                # may bring the stall advisory.
                sse = await stack.enter_async_context(
                    aclosing(reading.sse_chunks(resp.chunks, first))
                )
                async for event in self._events(
                    sse, reading, decoder, ctx, resp.status, content_type
                ):
                    yield event
        except HTTPTransportError as exc:
            raise network_error(ctx, str(exc)) from exc
        except Exception as exc:
            if _is_httpx_transport_error(exc):
                raise network_error(ctx, _describe(exc)) from exc
            raise

    async def _events(
        self,
        chunks: AsyncIterator[bytes | Stalled],
        reading: BodyReader,
        decoder: StreamDecoder,
        ctx: ErrorContext,
        status: int,
        content_type: str,
    ) -> AsyncGenerator[StreamEvent, None]:
        """An event stream's frames through the decoder, the idle clock told what was progress:
        whole events other than keep-alives, or the growth of one event past
        `PARTIAL_PROGRESS_BYTES` (a multi-MiB final event on a slow link). Bytes of a smaller
        unfinished event are a trickle, which does not hold the reply open."""
        parser = SSEParser()
        frames_seen = False
        partial = 0
        async for chunk in chunks:
            if isinstance(chunk, Stalled):
                yield chunk
                continue
            frames = parser.feed(chunk)
            grown, partial = parser.partial > partial, parser.partial
            if any(not _keepalive(frame) for frame in frames):
                reading.progress(event=True)
            elif grown and partial > PARTIAL_PROGRESS_BYTES:
                reading.progress()
            elif partial:
                reading.trickle(len(chunk))
            else:
                reading.keepalive()
            for name, data in frames:
                frames_seen = True
                for event in decoder.feed(name, data):
                    yield event
                if decoder.complete:
                    break
            if decoder.complete:
                break
        if decoder.complete:
            await _drain(chunks)
        else:
            tail = parser.finish()
            if not frames_seen and not tail:
                raise unexpected_body(
                    ctx, status, content_type, reading.head, expected="an event stream"
                )
            for event in _flush(tail, decoder, ctx):
                yield event
        yield decoder.finish()


@dataclass(slots=True, eq=False)
class _Reply:
    """A reply's status and headers, and its body as it arrives."""

    status: int
    headers: Mapping[str, str]  # case-insensitive lookups by lowercase name
    chunks: AsyncIterator[bytes]


def _is_httpx_transport_error(exc: BaseException) -> bool:
    httpx = sys.modules.get("httpx")  # only the httpx path can raise one, and it imported httpx
    return httpx is not None and isinstance(exc, httpx.TransportError)


def _keepalive(frame: SSEEvent) -> bool:
    """Anthropic's `ping` events keep the connection open and say nothing about the reply."""
    return frame[0] == "ping"


def _flush(tail: list[SSEEvent], decoder: StreamDecoder, ctx: ErrorContext) -> list[StreamEvent]:
    """Frames left when the body ended without a closing blank line. A last frame that does
    not parse was cut off in transit: a dropped stream (retried), not a malformed one."""
    out: list[StreamEvent] = []
    for name, data in tail:
        try:
            out.extend(decoder.feed(name, data))
        except LLMError as err:
            if err.kind != "invalid_response":
                raise
            raise network_error(ctx, "the stream was cut off in the middle of a frame") from err
    return out


async def _drain(chunks: AsyncIterator[bytes | Stalled]) -> None:
    """Read to the end of the body so the connection goes back to the pool for reuse."""
    try:
        async with asyncio.timeout(DRAIN_S):
            async for _ in chunks:
                pass
    except Exception as exc:  # the reply is complete; losing keep-alive here is harmless
        if not isinstance(exc, TimeoutError | HTTPTransportError) and not _is_httpx_transport_error(
            exc
        ):
            raise


def _describe(exc: Exception) -> str:
    text = str(exc).strip()
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def _reason(err: LLMError) -> str:
    if err.status:
        return f"{err.kind} (HTTP {err.status})"
    return err.kind


def _final(
    err: LLMError, attempts: int, asked_wait: float | None, *, budget_s: float | None = None
) -> LLMError:
    err.attempts = attempts
    notes = []
    if asked_wait is not None:
        notes.append(f"the provider asked to wait {asked_wait:.0f} s before retrying")
    if budget_s is not None:
        notes.append(
            f"the retry budget of {budget_s:g} s ({setting_name('retry_budget_s')}) is spent"
        )
    if attempts > 1:
        notes.append(f"gave up after {attempts} attempts")
    if notes:
        err.message = f"{err.message} ({'; '.join(notes)})"
        err.args = (err.message,)
    return err
