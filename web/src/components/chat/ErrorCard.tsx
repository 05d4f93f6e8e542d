import { AlertTriangle, KeyRound, RotateCcw, Send } from "lucide-react";
import { useState } from "react";
import { errorMessage } from "../../api/http";
import type { ErrorInfo } from "../../api/types";
import { sendMessage } from "../../state/actions";
import { openDialog } from "../../state/app";
import { setComposerText } from "./composerBus";

interface Props {
  error: ErrorInfo | null;
  prompt: string | null;
  workspaceId: string;
  isLast: boolean;
}

/** A turn that ended on an error, with the ways out: retry the prompt, or edit and resend it. */
export function ErrorCard(props: Props) {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const err = props.error;
  const retry = async () => {
    if (!props.prompt) return;
    setBusy(true);
    setFailure(null);
    try {
      await sendMessage(props.workspaceId, props.prompt, "turn");
    } catch (exc) {
      setFailure(errorMessage(exc));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="error-card" role="alert">
      <div className="title">
        <AlertTriangle size={14} aria-hidden style={{ verticalAlign: "-2px", marginRight: 6 }} />
        {err ? err.message : "The turn ended on an error."}
      </div>
      {err?.hint ? <div className="muted">{err.hint}</div> : null}
      {err?.code ? <div className="faint">{err.kind ? `${err.kind}: ` : ""}{err.code}</div> : null}
      {err && (err.kind === "auth" || err.kind === "config") ? (
        <div className="muted" data-testid="settings-hint">
          Settings can store or replace the provider's API key.{" "}
          <button type="button" className="btn" onClick={() => openDialog({ kind: "settings" })}>
            <KeyRound size={14} aria-hidden /> Open Settings
          </button>
        </div>
      ) : null}
      {failure ? <div className="form-error">{failure}</div> : null}
      {props.isLast && props.prompt ? (
        <div className="actions">
          <button type="button" className="btn" disabled={busy} onClick={() => void retry()}>
            <RotateCcw size={14} aria-hidden /> Retry
          </button>
          <button
            type="button"
            className="btn"
            onClick={() => setComposerText(props.workspaceId, props.prompt ?? "")}
          >
            <Send size={14} aria-hidden /> Edit and resend
          </button>
        </div>
      ) : null}
    </div>
  );
}
