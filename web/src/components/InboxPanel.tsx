// The attention inbox in the sidebar (docs/inbox.md): a button with the count of waiting items,
// and the list, each item answered in place. Every string of an item (the command, the
// question, the plan, the workspace's name) may come from the model or the repository: text
// only, never HTML.

import { Inbox as InboxIcon } from "lucide-react";
import { useState } from "react";
import { errorMessage } from "../api/http";
import type { InboxItem, PendingQuestionItem } from "../api/types";
import { isMacPlatform, shortcutLabel } from "../lib/keybinds";
import { useStore } from "../lib/store";
import { selectWorkspace } from "../state/app";
import { answerItem, approveItem, dismissItem, inbox, readItem } from "../state/inbox";
import { FormError } from "./FormParts";

const mac = typeof navigator !== "undefined" && isMacPlatform(navigator.platform);

const KIND_LABEL: Record<InboxItem["kind"], string> = {
  approval: "Approval",
  question: "Question",
  plan: "Plan",
  "turn-ended": "Turn ended",
  "goal-stopped": "Goal stopped",
  "budget-spent": "Budget spent",
  notify: "Notification",
};

function ago(since: number): string {
  const s = Math.max(0, Math.round((Date.now() - since) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

/** The sidebar header's button: the count, and the list open or closed. */
export function InboxButton() {
  const available = useStore(inbox, (s) => s.available);
  const count = useStore(inbox, (s) => s.items.length);
  const open = useStore(inbox, (s) => s.open);
  if (!available) return null;
  const shortcut = shortcutLabel("NEXT_INBOX_ITEM", mac);
  return (
    <button
      type="button"
      className={`inbox-button ${count > 0 ? "has-items" : ""}`}
      aria-expanded={open}
      aria-label={`Inbox: ${count} waiting`}
      title={`Inbox (${shortcut}: the next waiting workspace)`}
      onClick={() => inbox.update({ open: !open })}
    >
      <InboxIcon size={16} aria-hidden />
      <span className="inbox-count counter-nums" data-count={count}>
        {count}
      </span>
    </button>
  );
}

export function InboxPanel() {
  const open = useStore(inbox, (s) => s.open);
  const items = useStore(inbox, (s) => s.items);
  if (!open) return null;
  return (
    <section className="inbox-panel" aria-label="Inbox">
      {items.length === 0 ? <div className="faint inbox-empty">Nothing waits for you.</div> : null}
      {items.map((item) => (
        <InboxRow key={item.id} item={item} />
      ))}
    </section>
  );
}

function InboxRow(props: { item: InboxItem }) {
  const item = props.item;
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const act = async (call: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await call();
      // It leaves the list when the server says so (inbox-removed), here and everywhere.
    } catch (exc) {
      setError(errorMessage(exc));
      setBusy(false);
    }
  };
  return (
    <article className="inbox-item" data-item-id={item.id} data-kind={item.kind} data-workspace-id={item.workspaceId}>
      <div className="inbox-head">
        <strong>{KIND_LABEL[item.kind]}</strong>
        <button type="button" className="inbox-ws" onClick={() => selectWorkspace(item.workspaceId)}>
          {item.workspaceName}
        </button>
        <span className="faint" title={new Date(item.since).toLocaleString()}>
          {ago(item.since)}
        </span>
      </div>
      <div className="inbox-summary">{item.summary}</div>
      {item.kind === "approval" ? <ApprovalAnswers item={item} busy={busy} act={act} /> : null}
      {item.kind === "question" ? <QuestionAnswers item={item} busy={busy} act={act} /> : null}
      {item.kind === "plan" ? <PlanView item={item} /> : null}
      {item.actions.includes("read") ? (
        <div className="inbox-actions">
          <button type="button" className="btn btn-small" disabled={busy} onClick={() => void act(() => readItem(item.id))}>
            Mark read
          </button>
          <button type="button" className="btn btn-small" disabled={busy} onClick={() => void act(() => dismissItem(item.id))}>
            Dismiss
          </button>
        </div>
      ) : null}
      <FormError message={error} />
    </article>
  );
}

type Act = (call: () => Promise<void>) => Promise<void>;

function ApprovalAnswers(props: { item: InboxItem; busy: boolean; act: Act }) {
  const { item, busy, act } = props;
  const [reason, setReason] = useState("");
  const [denying, setDenying] = useState(false);
  return (
    <>
      <pre className="approval-subject">{String(item.detail.subject ?? "")}</pre>
      <div className="inbox-actions">
        <button type="button" className="btn btn-primary btn-small" disabled={busy} onClick={() => void act(() => approveItem(item.id, "once"))}>
          Approve once
        </button>
        {item.actions.includes("always") ? (
          <button type="button" className="btn btn-small" disabled={busy} onClick={() => void act(() => approveItem(item.id, "always"))}>
            Always allow
          </button>
        ) : null}
        {denying ? null : (
          <button type="button" className="btn btn-small" disabled={busy} onClick={() => setDenying(true)}>
            Deny…
          </button>
        )}
      </div>
      {denying ? (
        <div className="inbox-actions">
          <input
            className="input"
            aria-label="Reason for denying"
            placeholder="Why (the model is told)"
            value={reason}
            onChange={(e) => setReason(e.target.value)}
          />
          <button
            type="button"
            className="btn btn-danger btn-small"
            disabled={busy}
            onClick={() => void act(() => approveItem(item.id, "deny", reason.trim() || undefined))}
          >
            Deny
          </button>
        </div>
      ) : null}
    </>
  );
}

function QuestionAnswers(props: { item: InboxItem; busy: boolean; act: Act }) {
  const { item, busy, act } = props;
  const questions = (item.detail.questions ?? []) as PendingQuestionItem[];
  const [picked, setPicked] = useState<Record<string, string[]>>({});
  const [typed, setTyped] = useState<Record<string, string>>({});
  const toggle = (q: PendingQuestionItem, label: string) => {
    setPicked((all) => {
      const now = all[q.question] ?? [];
      const next = q.multiSelect ? (now.includes(label) ? now.filter((l) => l !== label) : [...now, label]) : [label];
      return { ...all, [q.question]: next };
    });
  };
  const answers: Record<string, string> = {};
  for (const q of questions) {
    const own = (typed[q.question] ?? "").trim();
    const labels = picked[q.question] ?? [];
    const value = own || labels.join(", ");
    if (value) answers[q.question] = value;
  }
  const complete = questions.length > 0 && questions.every((q) => q.question in answers);
  return (
    <>
      {questions.map((q) => (
        <fieldset key={q.question} className="inbox-question">
          <legend>{q.question}</legend>
          <div className="inbox-options">
            {q.options.map((o) => (
              <button
                key={o.label}
                type="button"
                className={`btn btn-small option ${(picked[q.question] ?? []).includes(o.label) ? "selected" : ""}`}
                aria-pressed={(picked[q.question] ?? []).includes(o.label)}
                title={o.description}
                disabled={busy}
                onClick={() => toggle(q, o.label)}
              >
                {o.label}
              </button>
            ))}
          </div>
          <input
            className="input"
            aria-label={`Your own answer: ${q.question}`}
            placeholder="Or your own words"
            value={typed[q.question] ?? ""}
            onChange={(e) => setTyped((all) => ({ ...all, [q.question]: e.target.value }))}
          />
        </fieldset>
      ))}
      <div className="inbox-actions">
        <button type="button" className="btn btn-primary btn-small" disabled={busy || !complete} onClick={() => void act(() => answerItem(item.id, answers))}>
          Answer
        </button>
        <button type="button" className="btn btn-small" disabled={busy} onClick={() => void act(() => dismissItem(item.id))}>
          Dismiss
        </button>
      </div>
    </>
  );
}

function PlanView(props: { item: InboxItem }) {
  const [shown, setShown] = useState(false);
  const content = props.item.detail.content;
  return (
    <>
      <div className="inbox-actions">
        <button type="button" className="btn btn-small" aria-expanded={shown} onClick={() => setShown(!shown)}>
          {shown ? "Hide plan" : "Open plan"}
        </button>
      </div>
      {shown ? (
        <pre className="inbox-plan">{typeof content === "string" ? content : "The plan is too large to show here: open the workspace."}</pre>
      ) : null}
    </>
  );
}
