import { Loader2 } from "lucide-react";
import { memo } from "react";
import type { GovernorWaitEvent, ReplyStalledEvent, RetryingEvent } from "../../api/types";
import { startsHere, type AssistantRow, type ContextNoteRow, type InFlight, type LiveCall, type NoticeRow, type TurnEndRow, type UserRow } from "../../state/transcript";
import { Markdown } from "../markdown/Markdown";
import { ToolCard } from "../tools/ToolCard";
import { ErrorCard } from "./ErrorCard";
import { Citations, WebSearches } from "./WebSearches";
import { Compacting, StartHere } from "./Compaction";
import { ImageThumbs } from "./ImageThumbs";

export const UserMessage = memo(function UserMessage(props: { row: UserRow; workspaceId: string }) {
  return (
    <div className="msg-user" data-role="user">
      <div className="bubble">
        {props.row.images?.length ? <ImageThumbs workspaceId={props.workspaceId} images={props.row.images} /> : null}
        {props.row.text}
        {props.row.queued ? <span className="queued">queued while the agent worked</span> : null}
      </div>
    </div>
  );
});

function Reasoning(props: { text: string; live?: boolean }) {
  if (!props.text) return null;
  return (
    <details className="reasoning">
      <summary>{props.live ? "Thinking…" : "Thought"}</summary>
      <div className="body">{props.text}</div>
    </details>
  );
}

const FINISH_NOTES: Record<string, string> = {
  length: "The reply reached the output limit.",
  refusal: "The model refused this request.",
  content_filter: "The provider's content filter stopped the reply.",
  budget: "Stopped: the budget was reached.",
  compaction: "Cut off: the context passed its auto-compaction threshold, so it was compacted and the turn went on.",
};

interface AssistantProps {
  row: AssistantRow;
  running: ReadonlySet<string>;
  /** Live tool output by call id (a new map only when some output arrived). */
  live: ReadonlyMap<string, LiveCall>;
  turnOpen: boolean;
  workspaceId: string;
}

export const AssistantMessage = memo(function AssistantMessage(props: AssistantProps) {
  const { row } = props;
  const note = FINISH_NOTES[row.finishReason];
  return (
    <div className="msg-assistant" data-role="assistant">
      <Reasoning text={row.reasoning} />
      <WebSearches searches={row.webSearches} />
      {row.text ? <Markdown text={row.text} /> : null}
      <Citations citations={row.citations} />
      {row.finishReason === "interrupted" ? <div className="faint">(interrupted)</div> : null}
      {note ? <div className="notice advisory">{note}</div> : null}
      {row.toolCalls.map((call) => (
        <ToolCard
          key={call.id}
          call={call}
          result={row.results[call.id]}
          running={props.running.has(call.id)}
          live={props.live.get(call.id)}
          turnOpen={props.turnOpen}
          workspaceId={props.workspaceId}
        />
      ))}
      {startsHere(row) && !props.turnOpen ? (
        <div className="msg-actions">
          <StartHere workspaceId={props.workspaceId} seq={row.seq} />
        </div>
      ) : null}
    </div>
  );
});

interface InFlightProps {
  partial: InFlight | null;
  retrying: RetryingEvent | null;
  /** The reply is stalling: a notice until it moves again. */
  stalled?: ReplyStalledEvent | null;
  /** The process's governor holds this workspace back: why, until it lets go. */
  governor?: GovernorWaitEvent | null;
  workspaceId: string;
  /** A question waits for the user's answer. */
  waiting: boolean;
  /** A summarization pass runs (its trigger). */
  compacting?: string | null;
}

/** The reply that is streaming now, continued by live deltas. */
export function InFlightMessage(props: InFlightProps) {
  const p = props.partial;
  const empty = !p || (!p.text && !p.reasoning && p.toolCalls.length === 0);
  return (
    <div className="msg-assistant" data-role="assistant-streaming" aria-live="polite" aria-busy="true">
      {p ? <Reasoning text={p.reasoning} live /> : null}
      {p?.text ? <Markdown text={p.text} /> : null}
      {p?.toolCalls.map((call, i) => (
        <ToolCard
          key={call.id || i}
          call={call}
          result={undefined}
          running={false}
          streaming
          turnOpen
          workspaceId={props.workspaceId}
        />
      ))}
      {props.stalled ? (
        <div className="notice advisory" role="status" data-role="reply-stalled">
          The model has sent nothing for {Math.round(props.stalled.silent_s)}s
          {props.stalled.began ? " in the middle of its reply" : " since it answered"}; the attempt ends
          and is retried after {props.stalled.idle_s}s of silence.
        </div>
      ) : null}
      {props.governor ? (
        <div className="notice advisory" role="status" data-role="governor-wait">
          Waiting ({props.governor.reason}): {props.governor.message}
        </div>
      ) : null}
      {props.retrying ? (
        <div className="notice advisory">
          Retrying (attempt {props.retrying.attempt}) in {props.retrying.delay_s}s: {props.retrying.reason}
        </div>
      ) : null}
      {empty && props.waiting ? <div className="working">Waiting for your answer.</div> : null}
      {empty && !props.waiting && props.compacting ? <Compacting trigger={props.compacting} /> : null}
      {empty && !props.waiting && !props.compacting ? (
        <div className="working">
          <Loader2 size={14} className="spin" aria-hidden /> Working…
        </div>
      ) : null}
    </div>
  );
}

const TURN_END_TEXT: Record<string, string> = {
  interrupted: "Turn interrupted.",
  budget: "Turn stopped: the budget was reached.",
  max_steps: "Turn stopped: it reached its step limit.",
  doom_loop: "Turn stopped: the agent repeated the same call.",
};

export const TurnEnd = memo(function TurnEnd(props: { row: TurnEndRow; workspaceId: string; isLast: boolean }) {
  const { row } = props;
  if (row.reason === "error") {
    return <ErrorCard error={row.error} prompt={row.prompt} workspaceId={props.workspaceId} isLast={props.isLast} />;
  }
  const text = TURN_END_TEXT[row.reason];
  if (!text) return null;
  return <div className="turn-end">{text}</div>;
});

export const Notice = memo(function Notice(props: { row: NoticeRow }) {
  return <div className={`notice ${props.row.tone}`}>{props.row.text}</div>;
});

/** Names for the parts of the context a context update reports as changed. */
const CONTEXT_PARTS: Record<string, string> = {
  agent: "agent",
  instructions: "instruction files",
  model: "model instructions",
  mode: "mode instructions",
  skills: "skills",
  mcp: "MCP servers",
  mcp_tools: "MCP tool catalog",
  plan: "plan mode",
  plan_file: "plan file",
};

export function contextPartsLabel(changed: readonly string[]): string {
  const names = changed.map((c) => (c.startsWith("tool:") ? `${c.slice(5)} tool notes` : CONTEXT_PARTS[c] ?? c));
  return names.length > 0 ? names.join(", ") : "the workspace's context";
}

/** xum's own note to the model that part of the context changed: a small collapsed line that
 * opens on the full text the model was sent (never a user bubble). */
export const ContextNote = memo(function ContextNote(props: { row: ContextNoteRow }) {
  return (
    <details className="context-note" data-role="context-note">
      <summary>Context updated: {contextPartsLabel(props.row.changed)}</summary>
      <pre className="context-note-body">{props.row.text}</pre>
    </details>
  );
});
