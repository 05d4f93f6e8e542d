// One tool call and its result. The header summarizes (tool, target, outcome); the body shows
// what matters for that tool: a bash script and its output, an edit's diff, a task list...

import {
  ChevronDown,
  ChevronRight,
  FileText,
  Globe,
  ListTodo,
  Loader2,
  MessageCircleQuestion,
  PencilLine,
  SquareTerminal,
  Wrench,
} from "lucide-react";
import { useLayoutEffect, useRef, useState, type ReactNode } from "react";
import type { ToolCallRef, ToolResultEvent } from "../../api/types";
import { firstLine, num, parseArgs, pretty, str, type Args } from "../../lib/args";
import { formatDuration } from "../../lib/format";
import { useStore } from "../../lib/store";
import { app, transcriptStore } from "../../state/app";
import { imagesOf } from "../../state/images";
import { latestPlanCall } from "../../state/rows";
import { isBackgroundStream, type LiveCall, type LiveStream } from "../../state/transcript";
import { ImageThumbs } from "../chat/ImageThumbs";
import { CodeBlock } from "../markdown/CodeBlock";
import { DiffView } from "./DiffView";
import { PlanCard } from "./PlanCard";
import { QuestionForm, questionsFrom } from "./QuestionForm";
import { Progress, TodoList, todoProgress, todosFrom } from "./TodoList";

type Phase = "streaming" | "running" | "approval" | "input" | "done" | "error" | "no-result";

interface Props {
  call: ToolCallRef;
  result: ToolResultEvent | undefined;
  running: boolean;
  /** Live output of the call so far (`tool-output` events), if any. */
  live?: LiveCall;
  /** Arguments are still streaming in. */
  streaming?: boolean;
  turnOpen: boolean;
  workspaceId: string;
}

/** What a call without a result waits on: a person's approval or answer, or nothing. */
type Waiting = "approval" | "input" | null;

const EDIT_TOOLS = new Set(["file_edit_replace_string", "file_edit_replace_lines", "file_edit_insert"]);

function phaseOf(props: Props, waiting: Waiting): Phase {
  if (props.result) return props.result.is_error ? "error" : "done";
  if (props.streaming) return "streaming";
  if (waiting !== null && (props.running || props.turnOpen)) return waiting;
  if (props.running || props.turnOpen) return "running";
  return "no-result";
}

const WAITING_LABEL = { approval: "waiting for approval", input: "waiting for input" } as const;

function iconFor(name: string): ReactNode {
  if (name === "bash") return <SquareTerminal size={15} aria-hidden />;
  if (EDIT_TOOLS.has(name)) return <PencilLine size={15} aria-hidden />;
  if (name === "file_read") return <FileText size={15} aria-hidden />;
  if (name === "web_fetch") return <Globe size={15} aria-hidden />;
  if (name.startsWith("todo_")) return <ListTodo size={15} aria-hidden />;
  if (name === "ask_user_question") return <MessageCircleQuestion size={15} aria-hidden />;
  return <Wrench size={15} aria-hidden />;
}

function summaryFor(name: string, args: Args | null, result: ToolResultEvent | undefined): string {
  if (name === "bash") {
    return str(args, "display_name") ?? firstLine(str(args, "script") ?? "");
  }
  if (name === "web_fetch") return str(args, "url") ?? "";
  if (name.startsWith("todo_")) {
    const todos = todosFrom(result?.meta?.todos ?? args?.todos);
    return todos ? `${todos.length} task${todos.length === 1 ? "" : "s"}` : "";
  }
  const path = str(args, "path") ?? str(args, "file_path") ?? str(result?.meta, "path");
  if (path) return path;
  for (const v of Object.values(args ?? {})) if (typeof v === "string") return firstLine(v);
  return "";
}

function Outcome(props: { name: string; phase: Phase; result: ToolResultEvent | undefined }) {
  const meta = props.result?.meta ?? null;
  if (props.phase === "approval" || props.phase === "input") {
    return <span className="badge warn">{WAITING_LABEL[props.phase]}</span>;
  }
  if (props.phase === "streaming" || props.phase === "running") {
    return (
      <span className="badge">
        <Loader2 size={12} className="spin" aria-hidden />
        {props.phase === "streaming" ? "preparing" : "running"}
      </span>
    );
  }
  if (props.phase === "no-result") return <span className="badge warn">no result</span>;
  const duration = props.result?.duration_s ?? num(meta, "duration_s");
  const time = duration ? (
    <span className="faint counter-nums optional">{formatDuration(duration)}</span>
  ) : null;
  if (props.name === "bash") {
    const code = num(meta, "exit_code");
    const signal = meta?.signal;
    const timedOut = meta?.timed_out === true;
    const label = timedOut
      ? "timed out"
      : code !== null
        ? `exit ${code}`
        : signal != null
          ? `signal ${String(signal)}`
          : props.phase === "error"
            ? "error"
            : "done";
    return (
      <>
        {time}
        <span className={`badge ${code === 0 ? "ok" : "bad"}`}>{label}</span>
      </>
    );
  }
  return (
    <>
      {time}
      <span className={`badge ${props.phase === "error" ? "bad" : "ok"}`}>
        {props.phase === "error" ? "error" : "done"}
      </span>
    </>
  );
}

function Output(props: { text: string; label?: string }) {
  return (
    <>
      <div className="label">{props.label ?? "Output"}</div>
      <pre>{props.text}</pre>
    </>
  );
}

function liveLabel(stream: string): string {
  if (stream === "output") return "Output (live)";
  if (isBackgroundStream(stream)) return `Background output (live, ${stream})`;
  if (stream.startsWith("hook:")) return `${stream.slice(5)} hook (live)`;
  if (stream === "progress") return "Progress (live)";
  return `${stream} (live)`;
}

/** A live stream: text as it arrives (React renders it as text, never as HTML), kept scrolled
 * to the end unless the reader scrolled up. */
function LiveOutput(props: { stream: LiveStream }) {
  const ref = useRef<HTMLPreElement>(null);
  const stick = useRef(true);
  useLayoutEffect(() => {
    const el = ref.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [props.stream.text]);
  const onScroll = () => {
    const el = ref.current;
    if (el) stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
  };
  return (
    <>
      <div className="label">{liveLabel(props.stream.stream)}</div>
      <pre className="live-output" data-live-stream={props.stream.stream} ref={ref} onScroll={onScroll} aria-live="off">
        {props.stream.text}
      </pre>
    </>
  );
}

/** The streams to show: before the result all of them; after it only background ones (the
 * result replaces the rest). */
function LiveBlocks(props: { live: LiveCall | undefined; result: ToolResultEvent | undefined }) {
  const streams = (props.live ?? []).filter((s) => !props.result || isBackgroundStream(s.stream));
  return (
    <>
      {streams.map((s) => (
        <LiveOutput key={s.stream} stream={s} />
      ))}
    </>
  );
}

function Body(props: Props & { args: Args | null }) {
  const { call, result, args } = props;
  const meta = result?.meta ?? null;
  const name = call.name;
  if (name === "bash") {
    const script = str(args, "script");
    const spill = str(meta, "spill_path");
    return (
      <>
        {script !== null ? <CodeBlock code={script} language="bash" /> : <pre>{call.arguments}</pre>}
        {result ? <Output text={result.output} /> : null}
        <LiveBlocks live={props.live} result={result} />
        {spill ? <div className="faint">Full output: {spill}</div> : null}
      </>
    );
  }

  if (EDIT_TOOLS.has(name)) {
    const diff = str(meta, "diff");
    if (diff) return <DiffView diff={diff} label={`Changes to ${str(meta, "path") ?? "file"}`} />;
    return result ? <Output text={result.output} label="Result" /> : <pre>{pretty(args ?? call.arguments)}</pre>;
  }
  if (name === "todo_write" || name === "todo_read") {
    const todos = todosFrom(meta?.todos ?? args?.todos);
    if (todos && !(result?.is_error ?? false)) return <TodoList todos={todos} />;
    return result ? <Output text={result.output} label="Result" /> : null;
  }
  if (name === "web_fetch") {
    const status = num(meta, "status");
    const type = str(meta, "content_type");
    return (
      <>
        {status !== null || type ? (
          <div className="faint">
            {status !== null ? `HTTP ${status}` : ""} {type ?? ""}
          </div>
        ) : null}
        {result ? <Output text={result.output} label="Page" /> : null}
      </>
    );
  }
  if (name === "file_read") {
    return result ? <Output text={result.output} label="Content" /> : null;
  }
  const images = imagesOf(meta);
  return (
    <>
      <div className="label">Arguments</div>
      <pre>{args ? pretty(args) : call.arguments}</pre>
      {result ? <Output text={result.output} label="Result" /> : null}
      {images.length ? <ImageThumbs workspaceId={props.workspaceId} images={images} /> : null}
    </>
  );
}

function answersOf(result: ToolResultEvent | undefined): Readonly<Record<string, unknown>> | null {
  const answers = result?.meta?.answers;
  return typeof answers === "object" && answers !== null && !Array.isArray(answers)
    ? (answers as Record<string, unknown>)
    : null;
}

export function ToolCard(props: Props) {
  const args = parseArgs(props.call.arguments);
  const name = props.call.name;
  const canAnswer = useStore(app, (s) => s.caps.answers);
  const pending = useStore(app, (s) => s.questions[props.workspaceId]);
  const approval = useStore(transcriptStore(props.workspaceId), (t) => t.approvals.some((a) => a.call_id === props.call.id));
  const latest = useStore(transcriptStore(props.workspaceId), (t) => name === "propose_plan" && latestPlanCall(t.rows) === props.call.id);
  const waiting: Waiting = approval ? "approval" : name === "ask_user_question" && pending ? "input" : null;
  const phase = phaseOf(props, waiting);
  const [open, setOpen] = useState<boolean | null>(null);

  if (name === "propose_plan" && props.result && !props.result.is_error) {
    const meta = props.result.meta?.plan;
    const plan = typeof meta === "object" && meta !== null ? (meta as Args) : null;
    const content = str(plan, "content");
    const path = str(plan, "path");
    const here = props.turnOpen ? null : { workspaceId: props.workspaceId, seq: props.result.seq };
    const actions = latest ? { workspaceId: props.workspaceId, busy: props.turnOpen } : null;
    if (content !== null) return <PlanCard plan={content} path={path} startHere={here} actions={actions} />;
    if (path !== null) return <PlanCard plan={`The plan is too large to show here; it is in ${path}.`} path={path} />;
  }

  const interactive = name === "ask_user_question" || name.startsWith("todo_") || EDIT_TOOLS.has(name);
  const background = props.live?.some((s) => isBackgroundStream(s.stream)) ?? false;
  const expanded = open ?? (phase === "running" || phase === "approval" || phase === "error" || interactive || background);
  const todos = name.startsWith("todo_") ? todosFrom(props.result?.meta?.todos ?? args?.todos) : null;

  return (
    <div className={`tool-card ${phase === "error" ? "error" : ""}`} data-tool={name} data-phase={phase}>
      <button
        type="button"
        className="tool-head"
        aria-expanded={expanded}
        onClick={() => setOpen(!expanded)}
      >
        <span style={{ display: "inline-flex", alignItems: "center", gap: 6 }}>
          {expanded ? <ChevronDown size={14} aria-hidden /> : <ChevronRight size={14} aria-hidden />}
          {iconFor(name)}
          <span className="tool-name">{name}</span>
        </span>
        <span className="tool-summary">{summaryFor(name, args, props.result)}</span>
        <span className="tool-meta">
          {todos && todos.length > 0 ? <Progress {...todoProgress(todos)} /> : null}
          <Outcome name={name} phase={phase} result={props.result} />
        </span>
      </button>
      {expanded && (
        <div className="tool-body">
          {name === "ask_user_question" ? (
            <QuestionForm
              workspaceId={props.workspaceId}
              questionId={!props.result && pending ? pending.questionId : null}
              questions={!props.result && pending ? questionsFrom({ questions: pending.questions }) : questionsFrom(args)}
              answered={props.result !== undefined || !props.turnOpen}
              canAnswer={canAnswer}
              answers={answersOf(props.result)}
            />
          ) : (
            <>
              <Body {...props} args={args} />
              {/* bash places its live output itself; for other tools it is their hooks'. */}
              {name !== "bash" ? <LiveBlocks live={props.live} result={props.result} /> : null}
            </>
          )}
        </div>
      )}
    </div>
  );
}
