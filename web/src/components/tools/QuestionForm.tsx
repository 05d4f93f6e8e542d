// ask_user_question: up to four multiple-choice questions answered in a form. "Other" is always
// offered for a free-form answer. Typing a normal chat message instead cancels the question.

import { useState } from "react";
import { api, errorMessage } from "../../api/http";
import type { Args } from "../../lib/args";

interface Option {
  label: string;
  description: string | null;
}

export interface Question {
  question: string;
  header: string | null;
  multiSelect: boolean;
  options: Option[];
}

export function questionsFrom(args: Args | null): Question[] {
  const raw = args?.questions;
  if (!Array.isArray(raw)) return [];
  const out: Question[] = [];
  for (const q of raw) {
    if (typeof q !== "object" || q === null) continue;
    const r = q as Record<string, unknown>;
    if (typeof r.question !== "string") continue;
    const options: Option[] = [];
    if (Array.isArray(r.options)) {
      for (const o of r.options) {
        if (typeof o === "string") options.push({ label: o, description: null });
        else if (typeof o === "object" && o !== null && typeof (o as Record<string, unknown>).label === "string") {
          const oo = o as Record<string, unknown>;
          options.push({
            label: String(oo.label),
            description: typeof oo.description === "string" ? oo.description : null,
          });
        }
      }
    }
    out.push({
      question: r.question,
      header: typeof r.header === "string" ? r.header : null,
      multiSelect: r.multiSelect === true || r.multi_select === true,
      options,
    });
  }
  return out;
}

const OTHER = "\u0000other";

interface Props {
  workspaceId: string;
  /** The server's id of the question while it waits; null when nothing waits for an answer. */
  questionId: string | null;
  questions: Question[];
  answered: boolean;
  /** Whether this server accepts answers from a form; otherwise the user answers in the chat. */
  canAnswer: boolean;
  /** The answers given, once the tool has its result. */
  answers?: Readonly<Record<string, unknown>> | null;
}

export function QuestionForm(props: Props) {
  if (props.answers) return <AnsweredQuestions answers={props.answers} />;
  return <OpenQuestions {...props} />;
}

function AnsweredQuestions(props: { answers: Readonly<Record<string, unknown>> }) {
  return (
    <dl className="question-form">
      {Object.entries(props.answers).map(([q, a]) => (
        <div key={q} style={{ marginBottom: 6 }}>
          <dt className="muted">{q}</dt>
          <dd style={{ margin: 0 }}>{String(a)}</dd>
        </div>
      ))}
    </dl>
  );
}

function OpenQuestions(props: Props) {
  const [picked, setPicked] = useState<Record<number, string[]>>({});
  const [other, setOther] = useState<Record<number, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const [sent, setSent] = useState(false);
  const disabled = props.answered || sent || sending || !props.canAnswer || props.questionId === null;

  const toggle = (qi: number, label: string, multi: boolean) => {
    setPicked((p) => {
      const cur = p[qi] ?? [];
      if (!multi) return { ...p, [qi]: [label] };
      return { ...p, [qi]: cur.includes(label) ? cur.filter((l) => l !== label) : [...cur, label] };
    });
  };

  const submit = async () => {
    const answers: Record<string, string> = {};
    for (const [i, q] of props.questions.entries()) {
      const labels = (picked[i] ?? []).map((l) => (l === OTHER ? (other[i] ?? "").trim() : l)).filter(Boolean);
      if (labels.length === 0) {
        setError(`Answer "${q.question}" first.`);
        return;
      }
      answers[q.question] = labels.join(", ");
    }
    setSending(true);
    setError(null);
    try {
      if (props.questionId === null) return;
      await api("POST", `/api/workspaces/${encodeURIComponent(props.workspaceId)}/answers`, {
        questionId: props.questionId,
        answers,
      });
      setSent(true);
    } catch (exc) {
      setError(errorMessage(exc));
    } finally {
      setSending(false);
    }
  };

  return (
    <form
      className="question-form"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      {props.questions.map((q, qi) => (
        <fieldset key={qi} disabled={disabled}>
          <legend>{q.header ?? q.question}</legend>
          {q.header ? <div style={{ marginBottom: 4 }}>{q.question}</div> : null}
          {[...q.options, { label: OTHER, description: null }].map((o) => (
            <label key={o.label}>
              <input
                type={q.multiSelect ? "checkbox" : "radio"}
                name={`q-${props.questionId ?? "closed"}-${qi}`}
                checked={(picked[qi] ?? []).includes(o.label)}
                onChange={() => toggle(qi, o.label, q.multiSelect)}
              />
              <span>
                {o.label === OTHER ? "Other" : o.label}
                {o.description ? <span className="desc">{o.description}</span> : null}
              </span>
            </label>
          ))}
          {(picked[qi] ?? []).includes(OTHER) && (
            <input
              className="input"
              aria-label="Other answer"
              value={other[qi] ?? ""}
              onChange={(e) => setOther((o) => ({ ...o, [qi]: e.target.value }))}
            />
          )}
        </fieldset>
      ))}
      {error ? <div className="form-error">{error}</div> : null}
      {!props.answered && (!props.canAnswer || props.questionId === null) ? (
        <div className="muted">Not waiting for an answer here; reply with a chat message.</div>
      ) : !props.answered && !sent ? (
        <button type="submit" className="btn btn-primary" disabled={sending}>
          Submit answers
        </button>
      ) : (
        <div className="muted">Answered.</div>
      )}
    </form>
  );
}
