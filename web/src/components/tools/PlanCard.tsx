import { ClipboardList } from "lucide-react";
import { useState } from "react";
import { Markdown } from "../markdown/Markdown";
import { CopyButton } from "../CopyButton";
import { StartHere } from "../chat/Compaction";

/** A proposed plan: rendered Markdown, copy, a raw-text toggle, and Start Here (the plan becomes
 * the whole context) when its result is on record. */
export function PlanCard(props: {
  plan: string;
  path?: string | null;
  startHere?: { workspaceId: string; seq: number } | null;
}) {
  const [raw, setRaw] = useState(false);
  return (
    <div className="plan-card">
      <div className="plan-head">
        <ClipboardList size={16} aria-hidden color="var(--color-plan-mode)" />
        <span className="plan-title">Plan</span>
        {/* The end of a long path matters most: it is cut at the start. */}
        <span className="plan-path">
          <bdi>{props.path ?? ""}</bdi>
        </span>
        <button type="button" className="btn" onClick={() => setRaw((r) => !r)} aria-pressed={raw}>
          {raw ? "Show Markdown" : "Show Text"}
        </button>
        <CopyButton text={props.plan} label="Copy plan" />
        {props.startHere ? <StartHere workspaceId={props.startHere.workspaceId} seq={props.startHere.seq} /> : null}
      </div>
      <div className="plan-body">
        {raw ? <pre className="pre-text">{props.plan}</pre> : <Markdown text={props.plan} />}
      </div>
    </div>
  );
}
