// A tool call that waits for the user's approval (docs/security.md#approvals): what it is, why
// xum asks, and the three answers. Every string here comes from the model or the repository
// (the command, the reason): rendered as text only.

import { ShieldAlert } from "lucide-react";
import { useState } from "react";
import { errorMessage } from "../../api/http";
import type { ApprovalRequestEvent } from "../../api/types";
import { useStore } from "../../lib/store";
import { answerApproval, transcriptStore } from "../../state/app";
import { FormError } from "../FormParts";

const KIND_LABEL: Record<string, string> = {
  critical: "Critical command",
  escalation: "Run outside the sandbox",
  command: "Command",
  write: "Edit outside the workspace",
  mcp: "MCP tool not marked read-only",
};

export function ApprovalCards(props: { workspaceId: string }) {
  const approvals = useStore(transcriptStore(props.workspaceId), (s) => s.approvals);
  if (approvals.length === 0) return null;
  return (
    <div className="approvals" aria-live="polite">
      {approvals.map((a) => (
        <ApprovalCard key={a.request_id} workspaceId={props.workspaceId} request={a} />
      ))}
    </div>
  );
}

function ApprovalCard(props: { workspaceId: string; request: ApprovalRequestEvent }) {
  const r = props.request;
  const [reason, setReason] = useState("");
  const [denying, setDenying] = useState(false);
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const answer = async (decision: "once" | "always" | "deny") => {
    setSending(true);
    setError(null);
    try {
      await answerApproval(props.workspaceId, r.request_id, decision, decision === "deny" ? reason.trim() || undefined : undefined);
    } catch (exc) {
      setError(errorMessage(exc));
      setSending(false);
    }
  };

  return (
    <section className={`approval-card kind-${r.kind === "critical" ? "critical" : "normal"}`} role="group" aria-label="Approval request" data-request-id={r.request_id}>
      <div className="approval-head">
        <ShieldAlert size={15} aria-hidden />
        <strong>{KIND_LABEL[r.kind] ?? "Approval"}</strong>
        <span className="muted"> · {r.tool}</span>
      </div>
      <pre className="approval-subject">{r.subject}</pre>
      <div className="approval-why">{r.why}</div>
      {r.reason ? (
        <div className="approval-reason">
          <span className="muted">The agent's reason: </span>
          {r.reason}
        </div>
      ) : null}
      {denying ? (
        <div className="approval-deny">
          <input
            type="text"
            aria-label="Reason for denying"
            placeholder="Why not (the agent is told; optional)"
            value={reason}
            maxLength={2000}
            onChange={(e) => setReason(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter") void answer("deny");
            }}
            autoFocus
          />
          <button type="button" className="btn" disabled={sending} onClick={() => void answer("deny")}>
            Deny
          </button>
          <button type="button" className="btn" disabled={sending} onClick={() => setDenying(false)}>
            Back
          </button>
        </div>
      ) : (
        <div className="approval-actions">
          <button type="button" className="btn primary" disabled={sending} onClick={() => void answer("once")}>
            Approve once
          </button>
          {r.prefix ? (
            <button type="button" className="btn" disabled={sending} onClick={() => void answer("always")}>
              Always allow <code>{r.prefix}</code> here
            </button>
          ) : null}
          <button type="button" className="btn" disabled={sending} onClick={() => setDenying(true)}>
            Deny…
          </button>
        </div>
      )}
      <FormError message={error} />
    </section>
  );
}
