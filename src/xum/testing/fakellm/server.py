"""`FakeLLM`: the scripted state (reply queue, responder, recordings, prompt cache) and the
request handling that ties the HTTP layer to the wire codecs. Runs on its own thread and
event loop (`with FakeLLM() as server:`) or on the caller's loop (`async with FakeLLM()`)."""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Self

import orjson

from xum.testing.fakellm.cache import CacheConfig, PromptCache
from xum.testing.fakellm.capacity import Capacity
from xum.testing.fakellm.http import Cut, HttpRequest, HttpServer, Response
from xum.testing.fakellm.record import RecordedRequest, ReplySource
from xum.testing.fakellm.script import Reply, Script, Stall, Wire
from xum.testing.fakellm.tokens import count
from xum.testing.fakellm.wires import CODECS, route
from xum.testing.fakellm.wires.common import (
    RenderContext,
    WireCodec,
    new_id,
    openai_error_body,
    resolve_usage,
)

DEFAULT_MODELS = ("claude-sonnet-4-5", "claude-haiku-4-5", "gpt-5", "gpt-5-mini")
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"
SSE_TYPE = "text/event-stream; charset=utf-8"
JSON_TYPE = "application/json"

Responder = Callable[[RecordedRequest], Reply | Awaitable[Reply | None] | None]


class FakeLLM:
    """A scripted fake of the Anthropic, OpenAI and Gemini HTTP APIs on 127.0.0.1.

    Replies come from the queue (`script`), then the responder (`set_responder`), then the
    default reply (`set_default`); with none of these a model request gets HTTP 500 naming
    what was missing. All public methods are thread-safe.
    """

    def __init__(
        self,
        *replies: Reply,
        host: str = "127.0.0.1",
        port: int = 0,
        models: Iterable[str] = DEFAULT_MODELS,
        cache: CacheConfig | None = None,
        validate: bool = True,
        default: Reply | None = None,
        responder: Responder | None = None,
    ) -> None:
        self.host = host
        self._requested_port = port
        self.port = 0
        self.models = list(models)
        self.cache_config = cache or CacheConfig()
        self.validate = validate  # reject requests the provider would reject (400)
        self._cache = PromptCache(self.cache_config)
        self._cond = threading.Condition()
        self._queue: deque[tuple[int, Reply]] = deque()
        self._scripted = 0  # replies ever scripted: a reply's number in messages
        self._requests: list[RecordedRequest] = []
        self._errors: list[str] = []
        self._default = default
        self._responder = responder
        self._http = HttpServer(self._handle, self._bad_request_body)
        self.capacity = Capacity()  # a provider's concurrency limit: `limit_concurrency`
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.script(*replies)

    @classmethod
    def from_script(cls, script: Script, **kwargs: Any) -> FakeLLM:
        if script.models is not None:
            kwargs.setdefault("models", script.models)
        if script.cache:
            kwargs.setdefault("cache", CacheConfig(**script.cache))
        return cls(*script.replies, default=script.default, **kwargs)

    # Scripting ---------------------------------------------------------------------------------

    def script(self, *replies: Reply) -> Self:
        """Append replies to the queue; each answers one model request, in order."""
        for r in replies:
            if not isinstance(r, Reply):
                raise TypeError(f"script() takes Reply objects, got {type(r).__name__}")
        with self._cond:
            for r in replies:
                self._queue.append((self._scripted, r))
                self._scripted += 1
        return self

    def set_default(self, reply: Reply | None) -> None:
        """The reply used whenever the queue is empty and no responder answers."""
        with self._cond:
            self._default = reply

    def set_responder(self, responder: Responder | None) -> None:
        """`responder(request) -> Reply | None` (may be async) answers when the queue is empty;
        None falls through to the default reply. It runs on the server's event loop: keep it
        quick, or make it async."""
        with self._cond:
            self._responder = responder

    def limit_concurrency(self, max_concurrent: int | None, retry_after: float = 1.0) -> None:
        """Answer at most `max_concurrent` model requests at once; one more gets 429 with
        `Retry-After: retry_after` and takes no reply (`capacity` counts). None: no limit."""
        self.capacity.set(max_concurrent, retry_after)

    def reset(self) -> None:
        """Forget replies, responder, default, recordings, errors and the prompt cache."""
        with self._cond:
            self._queue.clear()
            self._requests.clear()
            self._errors.clear()
            self._default = None
            self._responder = None
        self._cache.clear()

    @property
    def replies_left(self) -> int:
        with self._cond:
            return len(self._queue)

    # Recordings ----------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request so far, in the order they were answered."""
        with self._cond:
            return list(self._requests)

    @property
    def errors(self) -> list[str]:
        """The server's own complaints: no reply left, wire mismatches, rejected requests."""
        with self._cond:
            return list(self._errors)

    @property
    def connections_opened(self) -> int:
        return self._http.connections_opened

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least `n` requests were recorded; TimeoutError otherwise."""
        if self._loop is not None and self._thread is None and _running_loop() is self._loop:
            raise RuntimeError(
                "fakellm: wait_for_requests() would block the loop the server runs on; "
                "await wait_for_requests_async() instead"
            )
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._requests) >= n, timeout):
                raise TimeoutError(self._timeout_message(n, timeout))
            return list(self._requests)

    async def wait_for_requests_async(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        deadline = time.monotonic() + timeout
        while True:
            with self._cond:
                if len(self._requests) >= n:
                    return list(self._requests)
            if time.monotonic() >= deadline:
                raise TimeoutError(self._timeout_message(n, timeout))
            await asyncio.sleep(0.002)

    def _timeout_message(self, n: int, timeout: float) -> str:
        return f"fakellm: {len(self._requests)} request(s) recorded, expected {n} within {timeout}s"

    # Addresses -------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        if not self.port:
            raise RuntimeError("fakellm: the server is not started")
        return f"http://{self.host}:{self.port}"

    def base_url(self, wire: Wire | None = None) -> str:
        """The base URL a client should be configured with (every wire lives under /v1)."""
        if wire is not None and wire not in CODECS:
            raise ValueError(f"unknown wire {wire!r}")
        return f"{self.url}/v1"

    # Lifecycle -------------------------------------------------------------------------------

    def start(self) -> Self:
        """Serve on a background thread with its own event loop; returns once listening."""
        if self._thread is not None or self._loop is not None:
            raise RuntimeError("fakellm: already started")
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                self.port = loop.run_until_complete(
                    self._http.start(self.host, self._requested_port)
                )
            except BaseException as exc:
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=run, name="fakellm", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            self._thread = self._loop = None
            raise failure[0]
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._http.close(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        self._loop = self._thread = None

    async def start_async(self) -> Self:
        """Serve on the running event loop (no thread)."""
        if self._thread is not None or self._loop is not None:
            raise RuntimeError("fakellm: already started")
        self._loop = asyncio.get_running_loop()
        self.port = await self._http.start(self.host, self._requested_port)
        return self

    async def stop_async(self) -> None:
        if self._loop is not None and self._thread is None:
            await self._http.close()
            self._loop = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return await self.start_async()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop_async()

    # Request handling ------------------------------------------------------------------------

    def _bad_request_body(self, problem: str) -> bytes:
        return orjson.dumps(openai_error_body(400, f"fakellm: malformed HTTP request: {problem}"))

    def _record(self, rec: RecordedRequest) -> None:
        with self._cond:
            rec.index = len(self._requests)
            self._requests.append(rec)
            if rec.error:
                self._errors.append(rec.error)
            self._cond.notify_all()

    async def _handle(self, req: HttpRequest, resp: Response) -> None:
        # A client behind an HTTP proxy sends the absolute form (`POST http://host/v1/...`);
        # answering it as the proxy and the upstream at once lets tests drive the proxy path.
        target = req.target
        if target.startswith(("http://", "https://")):
            target = "/" + target.split("://", 1)[1].partition("/")[2]
        path, _, query = target.partition("?")
        parsed: Any = None
        if req.body:
            try:
                parsed = orjson.loads(req.body)
            except orjson.JSONDecodeError:
                parsed = None
        wire = route(path) if req.method == "POST" else None
        rec = RecordedRequest(
            index=-1,
            method=req.method,
            path=path,
            query=query,
            headers=req.headers,
            body=req.body,
            json=parsed,
            wire=wire,
            arrived=time.monotonic(),
            target=req.target,
        )
        if req.method == "GET" and (path == "/v1/models" or path.startswith("/v1/models/")):
            await self._send_models(rec, resp)
        elif req.method == "POST" and path == COUNT_TOKENS_PATH and isinstance(parsed, dict):
            total = sum(count(e) for e in CODECS["anthropic"].cache_input(parsed).elements)
            await self._send_json(rec, resp, 200, {"input_tokens": total}, [])
        elif wire is None:
            rec.error = f"fakellm: no route for {req.method} {path}"
            body = openai_error_body(404, rec.error)
            await self._send_json(rec, resp, 404, body, [])
        else:
            await self._limited_model_call(rec, CODECS[wire], resp)

    async def _limited_model_call(
        self, rec: RecordedRequest, codec: WireCodec, resp: Response
    ) -> None:
        if not self.capacity.enter():  # over `limit_concurrency`: the provider's 429
            body = codec.error_body(429, self.capacity.busy_message(), new_id("req_"))
            await self._send_json(rec, resp, 429, body, self.capacity.headers())
            return
        try:
            await self._handle_model_call(rec, codec, resp)
        finally:
            self.capacity.leave()

    async def _send_json(
        self,
        rec: RecordedRequest,
        resp: Response,
        status: int,
        body: Any,
        headers: list[tuple[str, str]],
    ) -> None:
        rec.status = status
        self._record(rec)
        await resp.send(status, [("content-type", JSON_TYPE), *headers], orjson.dumps(body))

    async def _send_models(self, rec: RecordedRequest, resp: Response) -> None:
        # One shape that both clients parse: OpenAI's list plus Anthropic's fields.
        data = [
            {
                "id": m,
                "object": "model",
                "created": 1735689600,
                "owned_by": "fakellm",
                "type": "model",
                "display_name": m,
                "created_at": "2025-01-01T00:00:00Z",
            }
            for m in self.models
        ]
        if rec.path == "/v1/models":
            body: dict[str, Any] = {
                "object": "list",
                "data": data,
                "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
            await self._send_json(rec, resp, 200, body, [])
            return
        wanted = rec.path.removeprefix("/v1/models/")
        for model in data:
            if model["id"] == wanted:
                await self._send_json(rec, resp, 200, model, [])
                return
        rec.error = f"fakellm: no model {wanted!r} (models: {', '.join(self.models)})"
        await self._send_json(rec, resp, 404, openai_error_body(404, rec.error), [])

    async def _pick(self, rec: RecordedRequest) -> tuple[Reply | None, ReplySource, int]:
        with self._cond:
            if self._queue:
                number, reply = self._queue.popleft()
                return reply, "queue", number
            responder, default = self._responder, self._default
        if responder is not None:
            answer = responder(rec)
            if inspect.isawaitable(answer):
                answer = await answer
            if answer is not None:
                if not isinstance(answer, Reply):
                    raise TypeError(f"the responder returned {type(answer).__name__}, not Reply")
                return answer, "responder", -1
        if default is not None:
            return default, "default", -1
        return None, "none", -1

    async def _handle_model_call(
        self, rec: RecordedRequest, codec: WireCodec, resp: Response
    ) -> None:
        request_id = new_id("req_")
        headers = [(codec.request_id_header, request_id)]
        where = f"{rec.method} {rec.path}"

        async def fail(status: int, message: str) -> None:
            rec.error = message
            await self._send_json(
                rec, resp, status, codec.error_body(status, message, request_id), headers
            )

        body = rec.json
        if not isinstance(body, dict):
            await fail(400, f"fakellm: the body of {where} is not a JSON object")
            return
        problem = codec.validate(body) if self.validate else None
        if problem is not None:
            await fail(400, problem)
            return
        try:
            reply, source, number = await self._pick(rec)
        except Exception as exc:
            await fail(500, f"fakellm: the responder raised {type(exc).__name__}: {exc}")
            return
        rec.reply, rec.reply_source = reply, source
        if reply is None:
            await fail(500, f"fakellm: no scripted reply left for {where}")
            return
        if reply.wire is not None and reply.wire != codec.wire:
            name = f"reply #{number + 1}" if number >= 0 else f"the {source} reply"
            await fail(
                500,
                f"fakellm: {name} ({reply.describe()}) is scripted for wire {reply.wire!r}, "
                f"but the request was {where} ({codec.wire})",
            )
            return
        await self._answer(rec, codec, reply, resp, headers, request_id)

    async def _answer(
        self,
        rec: RecordedRequest,
        codec: WireCodec,
        reply: Reply,
        resp: Response,
        headers: list[tuple[str, str]],
        request_id: str,
    ) -> None:
        body: dict[str, Any] = rec.json
        headers = [*headers, *reply.headers.items()]
        if reply.error is None:
            inp = codec.cache_input(body)
            account = (
                self._cache.account_breakpoints
                if codec.uses_cache_breakpoints()
                else self._cache.account_automatic
            )
            rec.cache = account(inp)
        content = codec.visible(reply.content, body, rec.notes)
        ctx = RenderContext(
            body=body,
            model=reply.model or rec.model or "fakellm",
            content=content,
            usage=resolve_usage(
                reply, content, rec.cache, input_excludes_cache=codec.input_excludes_cache
            ),
            created=int(time.time()),
            notes=rec.notes,
        )
        if reply.disconnect is not None and reply.disconnect.before_headers:
            rec.status = 0
        elif reply.error is not None:
            rec.status = reply.error.status
        elif reply.replay is not None:
            rec.status = reply.replay.status
        else:
            rec.status = 200
        self._record(rec)

        if reply.first_byte_delay:
            await asyncio.sleep(reply.first_byte_delay)
        if reply.disconnect is not None:
            if reply.disconnect.before_headers:
                await resp.abort(reset=reply.disconnect.reset)
            resp.cut_after(reply.disconnect.after_bytes, reset=reply.disconnect.reset)
        try:
            await self._write(rec, codec, reply, ctx, resp, headers, request_id)
            rec.finished = time.monotonic()
        except (Cut, ConnectionError):
            raise Cut from None  # the connection is gone: never reuse it

    async def _write(
        self,
        rec: RecordedRequest,
        codec: WireCodec,
        reply: Reply,
        ctx: RenderContext,
        resp: Response,
        headers: list[tuple[str, str]],
        request_id: str,
    ) -> None:
        if reply.error is not None:
            err = reply.error
            hdrs = [*headers, *err.headers.items()]
            if isinstance(err.body, str):
                payload = err.body.encode()
                hdrs.insert(0, ("content-type", "text/plain; charset=utf-8"))
            else:
                obj = err.body
                if obj is None:
                    obj = codec.error_body(err.status, err.message, request_id)
                payload = orjson.dumps(dict(obj))
                hdrs.insert(0, ("content-type", JSON_TYPE))
            await resp.send(err.status, hdrs, payload)
            return
        if reply.replay is not None:
            frames = _split_frames(reply.replay.data)
            content_type = reply.replay.content_type
            status = reply.replay.status
        elif rec.stream:
            plan = codec.render_stream(reply, ctx)
            frames = plan.frames
            if reply.stream_error is not None:
                se = reply.stream_error
                cut = len(frames) - plan.tail if se.after_event is None else se.after_event
                cut = max(0, min(cut, len(frames)))
                frames = frames[:cut] + codec.stream_error_frames(se, ctx, cut)
            content_type, status = SSE_TYPE, 200
        else:
            payload = orjson.dumps(codec.render_json(reply, ctx))
            if reply.stall is not None:  # a whole reply has nothing to send before it is done
                await _stall(resp, reply.stall, keepalives=False)
            await resp.send(200, [("content-type", JSON_TYPE), *headers], payload)
            return
        if reply.malformed is not None:
            at = max(0, min(reply.malformed.after_event, len(frames)))
            frames.insert(at, reply.malformed.frame.encode())
        stream_headers = [("content-type", content_type), ("cache-control", "no-cache"), *headers]
        if not reply.delay and not reply.byte_delay and reply.stall is None:
            await resp.send_stream(status, stream_headers, frames)
            return
        await resp.start(status, stream_headers)
        for i, frame in enumerate(frames):
            if reply.stall is not None and i == reply.stall.after_event:
                await resp.flush()
                await _stall(resp, reply.stall, keepalives=True)
            if reply.delay:
                await asyncio.sleep(reply.delay)
            if reply.byte_delay:
                await _trickle(resp, frame, reply.byte_delay)
                continue
            await resp.chunk(frame)
            await resp.flush()
        if reply.stall is not None and reply.stall.after_event >= len(frames):
            await resp.flush()
            await _stall(resp, reply.stall, keepalives=True)
        await resp.end()


async def _trickle(resp: Response, frame: bytes, every: float) -> None:
    """Send `frame` one byte at a time, `every` seconds apart (a stream that never stops but
    hardly moves); raises Cut when the client hangs up meanwhile."""
    for i in range(len(frame)):
        await resp.chunk(frame[i : i + 1])
        await resp.flush()
        if await resp.peer_closed(every):
            await resp.abort()


async def _stall(resp: Response, stall: Stall, *, keepalives: bool) -> None:
    """Hold the response (see `Stall`); raises Cut when the client hangs up meanwhile."""
    loop = asyncio.get_running_loop()
    deadline = None if stall.seconds is None else loop.time() + stall.seconds
    every = stall.keepalive_s if keepalives and stall.keepalive_s > 0 else None
    while True:
        wait = every
        if deadline is not None:
            left = deadline - loop.time()
            if left <= 0:
                return
            wait = left if wait is None else min(wait, left)
        if await resp.peer_closed(wait):
            await resp.abort()
        if every is not None and (deadline is None or loop.time() < deadline):
            await resp.chunk(stall.keepalive_frame())
            await resp.flush()


def _split_frames(data: bytes) -> list[bytes]:
    """A recorded stream, cut after each blank line; the bytes joined are the input."""
    frames: list[bytes] = []
    start = 0
    while (end := data.find(b"\n\n", start)) != -1:
        frames.append(data[start : end + 2])
        start = end + 2
    if start < len(data):
        frames.append(data[start:])
    return frames


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
