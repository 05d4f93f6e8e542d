import { ClipboardList } from "lucide-react";
import { useState } from "react";
import { Markdown } from "../markdown/Markdown";
import { CopyButton } from "../CopyButton";

/** A proposed plan: rendered Markdown, copy, and a raw-text toggle. */
export function PlanCard(props: { plan: string; path?: string | null }) {
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
      </div>
      <div className="plan-body">
        {raw ? <pre className="pre-text">{props.plan}</pre> : <Markdown text={props.plan} />}
      </div>
    </div>
  );
}
