// The transcript of one workspace as a pure projection of engine events (docs/events.md).
//
// Committed events (with `seq`) become rows; streaming events only touch the in-flight message.
// Every function returns a new state and never mutates its input, so React can compare by
// identity. Rows that did not change keep their identity, which keeps long transcripts cheap.

import type {
  ApprovalRequestEvent,
  AssistantMessageEvent,
  EngineEvent,
  GovernorWaitEvent,
  PartialMessage,
  ReplyStalledEvent,
  RetryingEvent,
  SearchHitRef,
  ToolCallRef,
  ToolOutputEvent,
  ToolResultEvent,
  WebSearchRef,
} from "../api/types";
import { goalText } from "./boundaries";

export type {
  AssistantRow,
  CompactionRow,
  ContextNoteRow,
  NoticeRow,
  Row,
  TurnEndRow,
  UserRow,
} from "./rows";
import type { AssistantRow, NoticeRow, Row } from "./rows";

/** One live stream of a running tool call, as far as it arrived. */
export interface LiveStream {
  stream: string;
  text: string;
}

/** A call's live streams, in the order they started. */
export type LiveCall = readonly LiveStream[];

export interface InFlight {
  text: string;
  reasoning: string;
  toolCalls: ToolCallRef[];
}

export interface TranscriptState {
  rows: readonly Row[];
  /** Highest committed seq applied (the `afterSeq` to resume from). */
  lastSeq: number;
  /** Lowest committed seq loaded, null before any history page. */
  firstSeq: number | null;
  /** Whether older history exists before `firstSeq`. */
  hasOlder: boolean;
  /** Whether the first history page has been applied. */
  loaded: boolean;
  partial: InFlight | null;
  /** Tool calls that started running and have no result yet. */
  running: ReadonlySet<string>;
  /** Live output by call id (`tool-output` events): foreground streams until the result,
   * background streams (`bash:<id>`) for as long as the process prints. */
  live: ReadonlyMap<string, LiveCall>;
  turnOpen: boolean;
  retrying: RetryingEvent | null;
  /** The reply in flight is stalling (`reply-stalled`), until it moves, retries or ends. */
  stalled: ReplyStalledEvent | null;
  /** The process's governor holds something of this workspace back (`governor-wait`), until
   * its `governor-wait-end` or the turn's end. */
  governor: GovernorWaitEvent | null;
  /** Results whose assistant message is not loaded (older page) yet. */
  orphans: ReadonlyMap<string, ToolResultEvent>;
  /** turn_id -> the user text that opened it (for retry). */
  prompts: ReadonlyMap<string, string>;
  /** The turn whose opening user message has not arrived yet. */
  promptFor: string | null;
  noticeCounter: number;
  /** A summarization pass is running (its trigger), from `compaction-start` to its end. */
  compacting: string | null;
  /** The newest hard `/clear`: nothing before it is shown or loaded. */
  clearedAt: number | null;
  /** Tool calls waiting for a person's approval (`approval-request` events), oldest first. */
  approvals: readonly ApprovalRequestEvent[];
}

export function emptyTranscript(): TranscriptState {
  return {
    rows: [],
    lastSeq: 0,
    firstSeq: null,
    hasOlder: false,
    loaded: false,
    partial: null,
    running: new Set(),
    live: new Map(),
    turnOpen: false,
    retrying: null,
    stalled: null,
    governor: null,
    orphans: new Map(),
    prompts: new Map(),
    promptFor: null,
    noticeCounter: 0,
    compacting: null,
    clearedAt: null,
    approvals: [],
  };
}

const EMPTY_RESULTS: Readonly<Record<string, ToolResultEvent>> = Object.freeze({});

interface Builder {
  rows: Row[];
  clearedAt: number | null;
  orphans: Map<string, ToolResultEvent>;
  prompts: Map<string, string>;
  /** The turn whose opening user message is still to come. */
  promptFor: string | null;
  turnOpen: boolean;
}

function attachResult(b: Builder, result: ToolResultEvent): void {
  for (let i = b.rows.length - 1; i >= 0; i--) {
    const row = b.rows[i];
    if (row?.kind === "assistant" && row.toolCalls.some((c) => c.id === result.call_id)) {
      b.rows[i] = { ...row, results: { ...row.results, [result.call_id]: result } };
      return;
    }
  }
  b.orphans.set(result.call_id, result);
}

const NO_SEARCHES: readonly WebSearchRef[] = [];
const NO_HITS: readonly SearchHitRef[] = [];

function assistantRow(b: Builder, ev: AssistantMessageEvent): AssistantRow {
  let results = EMPTY_RESULTS;
  for (const call of ev.tool_calls ?? []) {
    const orphan = b.orphans.get(call.id);
    if (orphan) {
      results = { ...results, [call.id]: orphan };
      b.orphans.delete(call.id);
    }
  }
  return {
    kind: "assistant",
    key: `s${ev.seq}`,
    seq: ev.seq,
    text: ev.text ?? "",
    reasoning: ev.reasoning ?? "",
    toolCalls: ev.tool_calls ?? [],
    finishReason: ev.finish_reason ?? "stop",
    results,
    inputTokens: ev.usage ? ev.usage.input_tokens : null,
    webSearches: ev.web_searches ?? NO_SEARCHES,
    citations: ev.citations ?? NO_HITS,
  };
}

/** Fold one committed event into the builder's rows. */
function addDurable(b: Builder, ev: EngineEvent): void {
  switch (ev.type) {
    case "turn-start":
      b.promptFor = ev.turn_id;
      b.turnOpen = true;
      return;
    case "user-message":
      if (ev.synthetic && ev.kind === "background_wake") {
        // A background process woke the agent: say so in one line (its first), not as the
        // user's words; the prompt of this turn is xum's.
        b.promptFor = null;
        const first = ev.text.split("\n", 1)[0] ?? "";
        b.rows.push({ kind: "notice", key: `s${ev.seq}`, seq: ev.seq, tone: "background", text: first });
        return;
      }
      if (ev.synthetic && ev.kind !== "goal_continuation") {
        // A context update (or any other note of xum's for the model): not the user's words,
        // and not the prompt of the turn it landed in.
        b.rows.push({ kind: "context-note", key: `s${ev.seq}`, seq: ev.seq, text: ev.text, changed: ev.changed ?? [] });
        return;
      }
      if (b.promptFor !== null) {
        b.prompts.set(b.promptFor, ev.text);
        b.promptFor = null;
      }
      if (ev.synthetic && ev.kind === "goal_continuation") {
        b.rows.push({ kind: "notice", key: `s${ev.seq}`, seq: ev.seq, tone: "goal", text: "The goal continues: an automatic turn." });
        return;
      }
      b.rows.push({
        kind: "user",
        key: `s${ev.seq}`,
        seq: ev.seq,
        // A slash command or `$skill` reference shows what was typed, not the skill bodies the
        // model received (the terminal UI and ACP do the same).
        text: ev.typed ?? ev.text,
        queued: ev.queued === true,
        ...(ev.images?.length ? { images: ev.images } : {}),
      });
      return;
    case "assistant-message":
      b.rows.push(assistantRow(b, ev));
      return;
    case "tool-result":
      attachResult(b, ev);
      return;
    case "turn-end":
      b.turnOpen = false;
      b.promptFor = null;
      b.rows.push({
        kind: "turn-end",
        key: `s${ev.seq}`,
        seq: ev.seq,
        turnId: ev.turn_id,
        reason: ev.reason,
        error: ev.error ?? null,
        prompt: b.prompts.get(ev.turn_id) ?? null,
      });
      return;
    case "damaged-frame":
      b.rows.push({
        kind: "notice",
        key: `s${ev.seq}`,
        seq: ev.seq,
        tone: "damaged",
        text: `Frame ${ev.seq} of the session log was damaged on disk and is skipped.`,
      });
      return;
    case "compaction":
      b.rows.push({
        kind: "compaction",
        key: `s${ev.seq}`,
        seq: ev.seq,
        summary: ev.summary ?? "",
        trigger: ev.trigger ?? "manual",
        model: ev.model ?? null,
        sourceSeq: ev.source_seq ?? null,
      });
      return;
    case "context-reset":
      if (ev.hard) {
        // /clear: the chat starts over; what came before is not shown (nor loaded again).
        b.rows.length = 0;
        b.orphans.clear();
        b.clearedAt = ev.seq;
      }
      b.rows.push({
        kind: "notice",
        key: `s${ev.seq}`,
        seq: ev.seq,
        tone: "boundary",
        text: ev.hard
          ? "Chat cleared. The agent starts over from here."
          : "Context cleared. The agent does not see the messages above.",
      });
      return;
    case "goal":
      b.rows.push({ kind: "notice", key: `s${ev.seq}`, seq: ev.seq, tone: "goal", text: goalText(ev.goal) });
      return;
    case "model-fallback":
      // The refused reply is not the answer: only this line stays of it.
      b.rows.push({ kind: "notice", key: `s${ev.seq}`, seq: ev.seq, tone: "advisory", text: ev.message });
      return;
    default:
      return;
  }
}

function isDurable(ev: EngineEvent): ev is EngineEvent & { seq: number } {
  return typeof (ev as { seq?: unknown }).seq === "number";
}

/** Apply a batch of events in order (live events, backlog, or the newest history page). */
export function applyEvents(state: TranscriptState, events: readonly EngineEvent[]): TranscriptState {
  if (events.length === 0) return state;
  let next: TranscriptState = state;
  let b: Builder | null = null;
  const builder = (): Builder => {
    if (b === null) {
      b = {
        rows: [...next.rows],
        clearedAt: next.clearedAt,
        orphans: new Map(next.orphans),
        prompts: new Map(next.prompts),
        promptFor: next.promptFor,
        turnOpen: next.turnOpen,
      };
    }
    return b;
  };
  const flush = (): void => {
    if (b === null) return;
    next = {
      ...next,
      rows: b.rows,
      clearedAt: b.clearedAt,
      hasOlder: b.clearedAt !== null && b.clearedAt !== next.clearedAt ? false : next.hasOlder,
      orphans: b.orphans,
      prompts: b.prompts,
      promptFor: b.promptFor,
      turnOpen: b.turnOpen,
    };
    b = null;
  };
  for (const ev of events) {
    if (isDurable(ev)) {
      if (ev.seq <= next.lastSeq) continue; // already applied (backlog overlapping a page)
      const bb = builder();
      addDurable(bb, ev);
      next = {
        ...next,
        lastSeq: ev.seq,
        firstSeq: next.firstSeq ?? ev.seq,
      };
      if (ev.type === "assistant-message" || ev.type === "model-fallback") {
        // A model-fallback: what streamed was the refusal, and the next model starts afresh.
        next = { ...next, partial: null, retrying: null, stalled: null };
      }
      if (ev.type === "compaction-start") next = { ...next, compacting: ev.trigger ?? "manual" };
      if (ev.type === "compaction") next = { ...next, compacting: null };
      if (ev.type === "tool-result" && next.running.has(ev.call_id)) {
        const running = new Set(next.running);
        running.delete(ev.call_id);
        next = { ...next, running };
      }
      if (ev.type === "tool-result") next = { ...next, live: endLive(next.live, ev.call_id) };
      if (ev.type === "turn-end") {
        next = {
          ...next,
          partial: null,
          running: new Set(),
          retrying: null,
          stalled: null,
          governor: null,
          live: endLive(next.live, null),
          compacting: null,
          approvals: [],
        };
      }
      continue;
    }
    flush();
    next = applyLive(next, ev);
  }
  flush();
  return next;
}

function emptyInFlight(): InFlight {
  return { text: "", reasoning: "", toolCalls: [] };
}

function applyLive(state: TranscriptState, ev: EngineEvent): TranscriptState {
  switch (ev.type) {
    case "step-start":
      return { ...state, turnOpen: true };
    case "text-delta": {
      const p = state.partial ?? emptyInFlight();
      return { ...state, partial: { ...p, text: p.text + ev.text }, retrying: null, stalled: null };
    }
    case "reasoning-delta": {
      const p = state.partial ?? emptyInFlight();
      return { ...state, partial: { ...p, reasoning: p.reasoning + ev.text }, retrying: null, stalled: null };
    }
    case "tool-call-start": {
      const p = state.partial ?? emptyInFlight();
      const toolCalls = [...p.toolCalls];
      toolCalls[ev.index] = { id: ev.call_id, name: ev.name, arguments: "" };
      return { ...state, partial: { ...p, toolCalls: toolCalls.map(fillHole) }, stalled: null };
    }
    case "tool-call-delta": {
      const p = state.partial;
      const call = p?.toolCalls[ev.index];
      if (!p || !call) return state;
      const toolCalls = [...p.toolCalls];
      toolCalls[ev.index] = { ...call, arguments: call.arguments + ev.arguments };
      return { ...state, partial: { ...p, toolCalls }, stalled: null };
    }
    case "tool-call": {
      const running = new Set(state.running);
      running.add(ev.call_id);
      return { ...state, running };
    }
    case "discard-partial":
      return { ...state, partial: null };
    case "retrying":
      return { ...state, retrying: ev, stalled: null };
    case "reply-stalled":
      return { ...state, stalled: ev };
    case "governor-wait":
      return { ...state, governor: ev };
    case "governor-wait-end":
      return { ...state, governor: null };
    case "tool-output":
      return { ...state, live: appendLive(state.live, ev) };
    case "approval-request":
      // Sent again to a client that subscribes while it waits: keep one of each.
      if (state.approvals.some((a) => a.request_id === ev.request_id)) return state;
      return { ...state, approvals: [...state.approvals, ev] };
    case "approval-resolved":
      return { ...state, approvals: state.approvals.filter((a) => a.request_id !== ev.request_id) };
    case "advisory": {
      const n = state.noticeCounter + 1;
      const row: NoticeRow = {
        kind: "notice",
        key: `n${n}`,
        seq: null,
        tone: "advisory",
        text: ev.message,
      };
      return { ...state, noticeCounter: n, rows: [...state.rows, row] };
    }
    default:
      return state;
  }
}

// ---- Live tool output ------------------------------------------------------------------------

/** The client's own bound per stream (the server sends at most 256 Ki characters and a marker
 * per stream): beyond it the oldest text is dropped, so a long-lived stream cannot grow the
 * page without limit. */
export const MAX_LIVE_CHARS = 300 * 1024;
/** Calls with live output kept at once; the oldest are forgotten first. */
export const MAX_LIVE_CALLS = 32;
export const LIVE_TRIMMED = "[… earlier live output trimmed …]\n";

/** Streams of background commands outlive the call's result. */
export function isBackgroundStream(stream: string): boolean {
  return stream.startsWith("bash:");
}

function bounded(text: string): string {
  if (text.length <= MAX_LIVE_CHARS) return text;
  const keep = MAX_LIVE_CHARS - LIVE_TRIMMED.length;
  return LIVE_TRIMMED + text.slice(text.length - keep);
}

function appendLive(live: ReadonlyMap<string, LiveCall>, ev: ToolOutputEvent): ReadonlyMap<string, LiveCall> {
  if (!ev.text) return live;
  const streams = live.get(ev.call_id) ?? [];
  const i = streams.findIndex((s) => s.stream === ev.stream);
  const updated =
    i < 0
      ? [...streams, { stream: ev.stream, text: bounded(ev.text) }]
      : streams.map((s, j) => (j === i ? { stream: s.stream, text: bounded(s.text + ev.text) } : s));
  const next = new Map(live);
  next.delete(ev.call_id); // re-inserted last: the map's order is "most recently written"
  next.set(ev.call_id, updated);
  while (next.size > MAX_LIVE_CALLS) {
    const oldest = next.keys().next().value;
    if (oldest === undefined) break;
    next.delete(oldest);
  }
  return next;
}

/** The result arrived (callId), or the turn ended (null: every call): foreground streams are
 * replaced by the result; background streams go on. */
function endLive(live: ReadonlyMap<string, LiveCall>, callId: string | null): ReadonlyMap<string, LiveCall> {
  if (live.size === 0) return live;
  let next: Map<string, LiveCall> | null = null;
  for (const [id, streams] of live) {
    if (callId !== null && id !== callId) continue;
    const kept = streams.filter((s) => isBackgroundStream(s.stream));
    if (kept.length === streams.length) continue;
    next ??= new Map(live);
    if (kept.length) next.set(id, kept);
    else next.delete(id);
  }
  return next ?? live;
}

function fillHole(call: ToolCallRef | undefined): ToolCallRef {
  return call ?? { id: "", name: "", arguments: "" };
}

/** Replace the in-flight message with the server's snapshot (sent on subscribe). */
export function applyPartial(state: TranscriptState, message: PartialMessage): TranscriptState {
  return {
    ...state,
    turnOpen: true,
    partial: {
      text: message.text ?? "",
      reasoning: message.reasoning ?? "",
      toolCalls: message.tool_calls ?? [],
    },
  };
}

/** Forget the in-flight message: called when (re)subscribing, before the server's snapshot.
 * Live tool output is dropped too: the server sends every running call's output so far again
 * (bounded), then the live deltas, so nothing printed while away is missing. Waiting approvals
 * are dropped: the server sends the ones still waiting again. */
export function resetInFlight(state: TranscriptState): TranscriptState {
  const idle =
    state.partial === null &&
    state.retrying === null &&
    state.stalled === null &&
    state.governor === null &&
    state.live.size === 0;
  if (idle && state.approvals.length === 0) return state;
  // The server sends what is still in flight again (a governor wait included).
  return { ...state, partial: null, retrying: null, stalled: null, governor: null, live: new Map(), approvals: [] };
}

/** Apply the newest page of history (the first load). */
export function applyTailPage(
  state: TranscriptState,
  events: readonly EngineEvent[],
  hasMore: boolean,
): TranscriptState {
  const next = applyEvents(state, events);
  const first = firstSeqOf(events);
  return {
    ...next,
    loaded: true,
    hasOlder: hasMore && next.clearedAt === null,
    firstSeq: first ?? next.firstSeq,
  };
}

function firstSeqOf(events: readonly EngineEvent[]): number | null {
  for (const ev of events) if (isDurable(ev)) return ev.seq;
  return null;
}

/** Prepend an older page (events with seq below `firstSeq`), keeping loaded rows as they are. */
export function prependPage(
  state: TranscriptState,
  events: readonly EngineEvent[],
  hasMore: boolean,
): TranscriptState {
  if (state.clearedAt !== null) return { ...state, hasOlder: false }; // nothing before /clear
  const floor = state.firstSeq ?? Number.POSITIVE_INFINITY;
  const older = events.filter((ev) => isDurable(ev) && ev.seq < floor);
  const b: Builder = {
    rows: [],
    clearedAt: null,
    orphans: new Map(state.orphans),
    prompts: new Map(state.prompts),
    promptFor: null,
    turnOpen: false,
  };
  // Results of the older page's calls may already sit in the orphans (their result row was in
  // the newer page). Rows are built oldest first, so a result always follows its call.
  for (const ev of older) addDurable(b, ev);
  // A turn-end row in the newer rows may now learn its prompt.
  const rows = [...b.rows, ...state.rows].map((row) =>
    row.kind === "turn-end" && row.prompt === null && b.prompts.has(row.turnId)
      ? { ...row, prompt: b.prompts.get(row.turnId) ?? null }
      : row,
  );
  return {
    ...state,
    rows,
    orphans: b.orphans,
    prompts: b.prompts,
    firstSeq: firstSeqOf(older) ?? state.firstSeq,
    hasOlder: hasMore && b.clearedAt === null,
    clearedAt: b.clearedAt,
    lastSeq: Math.max(state.lastSeq, lastSeqOf(older)),
  };
}

function lastSeqOf(events: readonly EngineEvent[]): number {
  let max = 0;
  for (const ev of events) if (isDurable(ev) && ev.seq > max) max = ev.seq;
  return max;
}

/** The text of the last user message, for "resend" after an error. */
export function lastUserText(state: TranscriptState): string | null {
  for (let i = state.rows.length - 1; i >= 0; i--) {
    const row = state.rows[i];
    if (row?.kind === "user") return row.text;
  }
  return null;
}


/** The prompt size of the newest reply: the context in use. */
export function contextTokens(rows: readonly Row[]): number | null {
  for (let i = rows.length - 1; i >= 0; i--) {
    const row = rows[i];
    if (row?.kind === "assistant" && row.inputTokens) return row.inputTokens;
    if (row?.kind === "compaction" || (row?.kind === "notice" && row.tone === "boundary")) return null;
  }
  return null;
}

export { startsHere } from "./boundaries";
