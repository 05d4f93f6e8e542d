"""Compaction, clearing and Start Here: the ways a session starts a new context segment.

A compaction is a summarization pass: one request to the `compact` agent (its instructions as the
system prompt, the history written out as a plain transcript, then the summary instructions; no
tools declared) whose reply becomes the summary. It runs as a turn of its own (`/compact`, the compaction before a
message sent at the auto-compaction threshold, idle compaction) or inside a running turn (the
context outgrew threshold + 5% while a reply streamed or a tool loop ran), and then the turn goes
on from the summary.

Crash safety comes from the log: the boundary is one `compaction` frame holding the whole
summary, appended in the same batch as the turn's end. A kill before that append leaves the old
context (and a turn crash recovery closes); after it, the new one. Never a mix.

`/clear --soft` appends a `context_reset` boundary when the model would see anything; `/clear`
also marks it `hard`, and the transcript views start over there. Start Here appends a
`compaction` boundary whose summary is an earlier final reply or a proposed plan: instant, free.
After any boundary the next request starts a fresh segment, which folds every pending change of
instructions, skills and `Tool:` sections into new frozen sections (`xum.context.frozen`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xum.context import compaction as texts
from xum.context.workspace import AgentSelection
from xum.core.errors import UsageError
from xum.core.ids import sortable_id
from xum.core.messages import Message, text_message
from xum.engine import events as E
from xum.engine.commits import message_text
from xum.engine.contextmeter import AutoCompactPolicy, ContextMeter, estimate_tokens, policy_for
from xum.engine.events import Event, EventSink
from xum.engine.recorder import FrameSpec
from xum.engine.records import TurnResult
from xum.engine.route import ModelRoute
from xum.engine.stream import StreamState, stream_step
from xum.engine.turnhost import TurnHost
from xum.llm import catalog
from xum.llm.client import LLMClient, open_client
from xum.llm.errors import LLMError
from xum.llm.types import LLMRequest
from xum.store import compaction_config as cc
from xum.store import frame_types as ev
from xum.store.frames import Frame

COMPACT_AGENT = texts.COMPACT_AGENT
# Room kept for the summary itself when an overlong history is cut to fit one request.
SUMMARY_ROOM_TOKENS = 8_000


class ForceCompaction(Exception):
    """Raised mid-stream once the context has grown past threshold + 5%."""


class Compactor:
    """The compaction machinery of one session. A compaction turn runs in the session's turn
    envelope like any turn (the writer lock, interrupts, the error mapping, the durable close);
    its body is one summarization request, and its boundary frame goes out with its turn_end."""

    def __init__(self, session: TurnHost) -> None:
        self.s = session
        self.meter = ContextMeter()

    # Measuring ---------------------------------------------------------------------------

    def policy(self) -> AutoCompactPolicy:
        route = self.s.route
        return policy_for(route.provider, route.model_id)

    def tokens(self) -> int:
        """What the next request would carry (provider-reported where possible)."""
        return self.meter.update(self.s.log)

    def compactable(self) -> bool:
        """Whether a summary would replace anything: the model sees more than a summary."""
        history = self.s.projection.update(self.s.log)
        if not history:
            return False
        return len(history) > 1 or self._newest_boundary() != ev.COMPACTION

    def due_before_send(self, text: str) -> bool:
        """A message sent now would start at or above the threshold."""
        limit = self.policy().limit
        if limit is None:
            return False
        return self.tokens() + estimate_tokens(text) >= limit and self.compactable()

    def due_mid_turn(self) -> bool:
        limit = self.policy().force_limit
        return limit is not None and self.tokens() >= limit and self.compactable()

    def stream_guard(self, emit: EventSink) -> EventSink:
        """`emit`, counting what the reply streams: past threshold + 5% (the request's size plus
        the reply so far) it raises ForceCompaction, which stops the stream."""
        limit = self.policy().force_limit
        if limit is None or not self.compactable():
            return emit
        grown = [self.tokens()]

        def guarded(event: Event) -> None:
            emit(event)
            if isinstance(event, E.TextDelta | E.ReasoningDelta):
                grown[0] += estimate_tokens(event.text)
            elif isinstance(event, E.ToolCallDelta):
                grown[0] += estimate_tokens(event.arguments)
            else:
                return
            if grown[0] >= limit:
                raise ForceCompaction()

        return guarded

    def check_fits(self) -> None:
        """Refuse, before it is sent, a request larger than the model's known window."""
        route = self.s.route
        window = self.policy().window
        if window is None:
            return
        tokens = self.tokens()
        if tokens <= window:
            return
        raise LLMError(
            "context_length",
            f"the next request would carry about {tokens:,} tokens, more than the "
            f"{window:,}-token context window of {route.model_string}; it was not sent",
            provider=route.provider,
            hint="/compact summarizes the history (or /clear starts over, or Start Here on an "
            "earlier reply); if it is the last message or tool output that is too large, send "
            "something smaller, or switch to a model with a larger window",
        )

    def _newest_boundary(self) -> str | None:
        for frame in reversed(self.s.log.frames):
            if not frame.damaged and frame.type in ev.BOUNDARY_TYPES:
                return frame.type
        return None

    # Compaction --------------------------------------------------------------------------

    async def compaction_turn(
        self,
        trigger: ev.CompactionTrigger,
        *,
        max_tokens: int | None = None,
        model: str | None = None,
    ) -> TurnResult:
        """A compaction as a turn of its own. UsageError, before anything is written, when there
        is nothing to compact or `model` cannot be used."""
        s = self.s
        if s.running:
            raise UsageError("a turn is running in this workspace", hint="compact once it ends")
        route = self._route(model)
        result = TurnResult(turn_id=sortable_id(), reason="completed", agent=COMPACT_AGENT)
        result.kind = "compaction"
        async with s.turn(result, "compaction") as turn:
            if not self.compactable():
                raise UsageError(
                    "nothing to compact: the model sees no conversation yet"
                    if not s.projection.update(s.log)
                    else "nothing to compact: the context is already just a summary",
                    hint="send a message first; /compact summarizes the conversation so far",
                )
            through = s.log.last_seq
            start: ev.TurnStartData = {
                "turn_id": result.turn_id,
                "model": route.model_string,
                "kind": "compaction",
            }
            await s.recorder.append(
                [ev.spec(ev.TURN_START, start), self._start_frame(result, trigger, route)]
            )
            async with s.envelope.guarded(turn):
                client = self._client(route)
                try:
                    data = await self._summarize(
                        result, route, client, trigger, through, max_tokens
                    )
                finally:
                    if client is not s.client:
                        await client.aclose()
                # The boundary goes out with the turn's end: a crash leaves both or neither.
                turn.boundary.append(ev.spec(ev.COMPACTION, data))
                result.steps = 1
                result.text = data["summary"].removeprefix(texts.COMPACTION_LEAD)
        return result

    async def compact_in_turn(self, result: TurnResult, trigger: ev.CompactionTrigger) -> None:
        """Compact inside a running turn (whose writer lock is held); the turn goes on from the
        summary. Errors (a provider error, an interrupt, the budget) end the turn as usual."""
        s = self.s
        route = self._route(None)
        through = s.log.last_seq
        await s.recorder.append([self._start_frame(result, trigger, route)])
        s.emit(
            E.Advisory(
                kind="auto-compaction",
                message=f"the context passed its auto-compaction threshold ({self.policy().threshold}% "
                "+ 5%) mid-turn: compacting, then the turn goes on",
            )
        )
        client = self._client(route)
        try:
            data = await self._summarize(result, route, client, trigger, through, None)
        finally:
            if client is not s.client:
                await client.aclose()
        await s.recorder.append([ev.spec(ev.COMPACTION, data)])

    def _start_frame(
        self, result: TurnResult, trigger: ev.CompactionTrigger, route: ModelRoute
    ) -> FrameSpec:
        data: ev.CompactionStartData = {
            "turn_id": result.turn_id,
            "trigger": trigger,
            "model": route.model_string,
        }
        return ev.spec(ev.COMPACTION_START, data)

    def _route(self, model: str | None) -> ModelRoute:
        """The model that summarizes: `-m` (remembered for next time), else the one `-m` chose
        last, else the session's. A remembered model that no longer resolves falls back to the
        session's with an advisory; an explicit one that does not resolve is an error."""
        s = self.s
        if model is not None:
            try:
                route = s.resolve_model(model)
            except LLMError as exc:
                raise UsageError(f"/compact -m {model}: {exc.message}", hint=exc.hint) from None
            cc.set_compaction_model(route.model_string)
            return route
        remembered = cc.compaction_model()
        if remembered is None or remembered == s.route.model_string:
            return s.route
        try:
            return s.resolve_model(remembered)
        except Exception as exc:
            s.emit(
                E.Advisory(
                    kind="compaction-model",
                    message=f"the compaction model {remembered} (chosen with /compact -m) cannot "
                    f"be used ({exc}); compacting with {s.route.model_string}",
                )
            )
            return s.route

    def _client(self, route: ModelRoute) -> LLMClient:
        s = self.s
        return s.client if route.endpoint == s.route.endpoint else open_client(route.endpoint)

    async def _summarize(
        self,
        result: TurnResult,
        route: ModelRoute,
        client: LLMClient,
        trigger: ev.CompactionTrigger,
        through: int,
        max_tokens: int | None,
    ) -> ev.CompactionData:
        """One summarization request; returns the `compaction` frame's data."""
        s = self.s
        live = await s.context.provider.live(
            AgentSelection(agent_id=COMPACT_AGENT), route.model_string
        )
        system = texts.compact_system(live)
        # The history goes as a transcript, tool calls and results written out as text, and no
        # tools are declared: the same request whether this process has a frozen segment (with
        # its tools) or not, no tool schemas taking the window, nothing a model could call.
        request_overhead = estimate_tokens(system)
        window = catalog.context_window(route.provider, route.model_id)
        known = self.policy().window if route is s.route else None
        window = known or window
        room = max_tokens or min(SUMMARY_ROOM_TOKENS, window // 4)
        budget = window - request_overhead - room
        transcript = texts.as_transcript(s.projection.update(s.log))
        history = texts.fit_history(transcript, budget, estimate_tokens)
        if not history:
            raise LLMError(
                "context_length",
                "the conversation cannot be summarized: even its last exchange is larger than "
                f"the context window of {route.model_string}",
                provider=route.provider,
                hint="/clear or Start Here on an earlier reply starts a new context without a "
                "summary",
            )
        instructions: Message = text_message(
            "user", texts.instructions(texts.target_words(max_tokens))
        )
        request = LLMRequest(
            model=route.model_id,
            system=system,
            messages=_ending_with(history, instructions),
            thinking="off",
            max_output_tokens=max_tokens,
            cache_key=f"xum-{s.workspace.id}",
            params=route.params,
        )
        state = StreamState()
        finish = await s.envelope.cancellable(
            stream_step(
                client,
                request,
                state,
                _retries_only(s.emit),
                _no_partial,
                s.ledger.watch(route.cost),
            )
        )
        cost = route.cost(finish.usage)
        s.ledger.account(result, finish.usage, cost, route.model_string)
        summary = message_text(finish.message).strip()
        if not summary:
            raise LLMError(
                "invalid_response",
                f"the compact agent ({route.model_string}) replied without a summary",
                provider=route.provider,
                hint="the conversation is unchanged; try /compact again, or another model with "
                "/compact -m <model>",
            )
        return {
            "summary": texts.COMPACTION_LEAD + summary,
            "through_seq": through,
            "trigger": trigger,
            "model": route.model_string,
            "usage": finish.usage.to_dict(),
            "cost_usd": cost,
        }

    # Clearing and Start Here -------------------------------------------------------------

    async def clear(self, *, soft: bool) -> TurnResult:
        """`/clear` or `/clear --soft`; a clear with nothing to clear is a no-op success."""
        s = self.s
        if s.running:
            raise UsageError("a turn is running in this workspace", hint="clear once it ends")
        result = TurnResult(turn_id=sortable_id(), reason="completed", steps=0)
        result.kind = "command"
        async with s.envelope.write_lock(result.turn_id):
            needed = (
                bool(s.projection.update(s.log)) if soft else _shown_since_hard_clear(s.log.frames)
            )
            if needed:
                data: ev.ContextResetData = {"reason": "clear"}
                if not soft:
                    data["hard"] = True
                await s.recorder.append([ev.spec(ev.CONTEXT_RESET, data)])
                s.todos.clear()  # carry-over state goes with the context
        return result

    async def start_here(self, seq: int) -> int:
        """Restart the context from the final reply or plan at `seq`; returns the boundary's
        seq. UsageError when that frame is neither."""
        s = self.s
        if s.running:
            raise UsageError(
                "a turn is running in this workspace", hint="use Start Here once it ends"
            )
        frame = _frame_at(s.log.frames, seq)
        summary = start_here_text(frame) if frame is not None else None
        if summary is None:
            raise UsageError(
                f"Start Here works on a final reply or a proposed plan; frame {seq} is neither",
                hint="pick a reply that has no tool calls, or a plan card",
            )
        async with s.envelope.write_lock(f"start-here-{seq}"):
            data: ev.CompactionData = {
                "summary": summary,
                "through_seq": s.log.last_seq,
                "trigger": "start_here",
                "source_seq": seq,
            }
            frames = await s.recorder.append([ev.spec(ev.COMPACTION, data)])
        return frames[0].seq or 0


def start_here_text(frame: Frame) -> str | None:
    """What Start Here on `frame` makes the whole context: a final assistant reply (text, no
    tool calls) or a plan `propose_plan` presented; None for anything else."""
    if frame.damaged:
        return None
    data = frame.data
    message = data.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return None
    parts = [p for p in content if isinstance(p, dict)]
    if frame.type == ev.ASSISTANT_MESSAGE:
        if any(p.get("type") == "tool_call" for p in parts):
            return None
        text = "".join(str(p.get("text", "")) for p in parts if p.get("type") == "text").strip()
        return texts.REPLY_LEAD + text if text else None
    if frame.type == ev.TOOL_RESULT:
        part = parts[0] if parts else {}
        plan = data.get("meta", {}).get("plan") if isinstance(data.get("meta"), dict) else None
        if part.get("name") != "propose_plan" or part.get("is_error") or not isinstance(plan, dict):
            return None
        body = plan.get("content")
        if not isinstance(body, str) or not body.strip():
            return None
        path = plan.get("path")
        return texts.plan_lead(path if isinstance(path, str) else None) + body
    return None


def _frame_at(frames: Any, seq: int) -> Frame | None:
    # Seqs are contiguous from 1, so the index is a good first guess; a gap (quarantined
    # frames) falls back to a scan.
    if 0 < seq <= len(frames) and frames[seq - 1].seq == seq:
        found: Frame = frames[seq - 1]
        return found
    return next((f for f in frames if f.seq == seq), None)


def _shown_since_hard_clear(frames: Any) -> bool:
    """Whether the transcript shows anything after the newest hard clear."""
    for frame in reversed(frames):
        if frame.damaged:
            continue
        if (
            frame.type == ev.CONTEXT_RESET
            and ev.payload(frame, ev.CONTEXT_RESET).get("hard") is True
        ):
            return False
        if frame.type in ev.MESSAGE_ROLES or frame.type in ev.BOUNDARY_TYPES:
            return True
    return False


def _ending_with(history: list[Message], instructions: Message) -> list[Message]:
    """The transcript, then the instructions: appended to its last message when that is a
    user's too (written-out tool results), so the roles keep alternating."""
    if history and history[-1]["role"] == "user":
        last = history[-1]["content"][0]
        if last["type"] == "text" and instructions["content"][0]["type"] == "text":
            merged = last["text"] + "\n\n" + instructions["content"][0]["text"]
            return [*history[:-1], text_message("user", merged)]
    return [*history, instructions]


def _retries_only(emit: EventSink) -> Callable[[Event], None]:
    """A summarization's deltas are not the agent's reply: only retry and stall notices go
    out."""

    def forward(event: Event) -> None:
        if isinstance(event, E.Retrying | E.ReplyStalled):
            emit(event)

    return forward


def _no_partial(_data: dict[str, Any]) -> None:
    """A summarization keeps no partial message (a reconnecting client would show it as a
    reply)."""
