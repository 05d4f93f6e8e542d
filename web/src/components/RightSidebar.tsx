// Costs and context usage, and the review pane (the workspace's diff against its base).

import { RefreshCw, X } from "lucide-react";
import { useEffect, useState } from "react";
import { api, errorMessage } from "../api/http";
import type { Costs, GitDiff, GitStatus, Workspace } from "../api/types";
import { formatCost, formatPercent, formatTokens } from "../lib/format";
import { modelEntry } from "../lib/models";
import { useStore } from "../lib/store";
import { app, transcriptStore } from "../state/app";
import { noteBranch } from "../state/branches";
import { activity } from "../state/activity";
import { contextTokens } from "../state/transcript";
import { ContextBar } from "./ContextBar";
import { DiffView } from "./tools/DiffView";
import { IconButton } from "./Tooltip";

type Load<T> = { state: "loading" } | { state: "error"; message: string } | { state: "ok"; data: T };

/** Fetch `path`, again whenever a turn ends anywhere or `refresh` or `also` changes. */
function useFetched<T>(path: string, refresh: number, also = 0): Load<T> {
  const epoch = useStore(app, (s) => s.turnEpoch);
  const [load, setLoad] = useState<Load<T>>({ state: "loading" });
  useEffect(() => {
    let live = true;
    api<T>("GET", path)
      .then((data) => live && setLoad({ state: "ok", data }))
      .catch((exc: unknown) => live && setLoad({ state: "error", message: errorMessage(exc) }));
    return () => {
      live = false;
    };
  }, [path, epoch, refresh, also]);
  return load;
}

function CostsPanel(props: { ws: Workspace }) {
  const [refresh, setRefresh] = useState(0);
  // Each committed reply adds tokens and cost: read them again then, not only at turn end.
  const replyCount = useStore(activity, (all) => all[props.ws.id]?.replies ?? 0);
  const load = useFetched<Costs>(`/api/workspaces/${encodeURIComponent(props.ws.id)}/costs`, refresh, replyCount);
  const models = useStore(app, (s) => s.models);
  const fromTranscript = useStore(transcriptStore(props.ws.id), (t) => contextTokens(t.rows));
  const state = useStore(app, (s) => s.statuses[props.ws.id]?.state);
  const streaming = state === "streaming";
  const approvals = useStore(transcriptStore(props.ws.id), (t) => t.approvals.length);
  // The newest turn, still open: what it is doing (a turn waiting on a person is not running).
  const openTurn =
    state === "waiting" ? (approvals > 0 ? "waiting for approval" : "waiting for input") : streaming ? "running" : "–";
  const hasContextRoute = useStore(app, (s) => s.caps.context);
  if (load.state === "loading") return <div className="muted">Loading…</div>;
  if (load.state === "error") return <div className="form-error">{load.message}</div>;
  const c = load.data;
  const u = c.usage;
  const window = modelEntry(models, props.ws.model)?.contextWindow ?? null;
  const lastTurn = c.turns[0];
  const context = fromTranscript ?? c.lastRequest?.inputTokens ?? null;
  const ctxWindow = c.lastRequest?.contextWindow ?? window;
  const ratio = context !== null && ctxWindow ? Math.min(1, context / ctxWindow) : null;
  return (
    <div>
      <div className="section-title" style={{ display: "flex", alignItems: "center" }}>
        <span style={{ flex: 1 }}>Session</span>
        <IconButton label="Refresh costs" onClick={() => setRefresh((r) => r + 1)}>
          <RefreshCw size={13} />
        </IconButton>
      </div>
      <dl className="stat-grid" aria-label="Session costs">
        <dt>Cost</dt>
        <dd className="counter-nums" data-testid="session-cost">{formatCost(c.costUsd)}</dd>
        <dt>Input tokens</dt>
        <dd className="counter-nums" data-testid="session-tokens-in">{formatTokens(u.inputTokens)}</dd>
        <dt>Output tokens</dt>
        <dd className="counter-nums">{formatTokens(u.outputTokens)}</dd>
        <dt>Cache read</dt>
        <dd className="counter-nums">{formatTokens(u.cacheReadTokens)}</dd>
        <dt>Cache write</dt>
        <dd className="counter-nums">{formatTokens(u.cacheWriteTokens)}</dd>
        <dt>Reasoning tokens</dt>
        <dd className="counter-nums">{formatTokens(u.reasoningTokens)}</dd>
        <dt>Cache hit ratio</dt>
        <dd className="counter-nums" data-testid="cache-hit">{formatPercent(c.cacheHitRatio)}</dd>
      </dl>
      <div className="section-title">Context</div>
      {hasContextRoute ? (
        <ContextBar workspaceId={props.ws.id} />
      ) : context !== null ? (
        <>
          <div className="counter-nums">
            {formatTokens(context)}
            {ctxWindow ? ` of ${formatTokens(ctxWindow)} (${formatPercent(ratio)})` : ""}
          </div>
          {ratio !== null ? (
            <div className="meter" role="meter" aria-label="Context used" aria-valuenow={Math.round(ratio * 100)} aria-valuemin={0} aria-valuemax={100}>
              <div style={{ width: `${Math.round(ratio * 100)}%` }} />
            </div>
          ) : null}
        </>
      ) : (
        <div className="muted" style={{ marginBottom: 12 }}>No requests yet.</div>
      )}
      <div className="section-title">Turns</div>
      {c.turns.length === 0 ? <div className="muted">No turns yet.</div> : null}
      <ul className="file-list">
        {c.turns.slice(0, 50).map((t, i) => (
          <li key={t.turnId}>
            <span className="path">
              {t.reason ?? (i === 0 ? openTurn : "–")} · {t.steps} step{t.steps === 1 ? "" : "s"}
            </span>
            <span className="counter-nums">{formatCost(t.costUsd)}</span>
          </li>
        ))}
      </ul>
      {lastTurn?.model ? <div className="faint">Last model: {lastTurn.model}</div> : null}
      {(c.byModel?.length ?? 0) > 1 ? (
        <>
          <div className="section-title">By model</div>
          <ul className="file-list" aria-label="Costs by model">
            {c.byModel?.map((m) => (
              <li key={m.model} data-model-cost={m.model}>
                <span className="path">{m.model}</span>
                <span className="counter-nums">{formatCost(m.costUsd)}</span>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </div>
  );
}

function BranchLine(props: { ws: Workspace; refresh: number }) {
  const load = useFetched<GitStatus>(`/api/workspaces/${encodeURIComponent(props.ws.id)}/git/status`, props.refresh);
  useEffect(() => {
    if (load.state === "ok") noteBranch(props.ws.id, load.data); // the header shows the same
  }, [load, props.ws.id]);
  if (load.state !== "ok") return null;
  const st = load.data;
  if (!st.isGit) return <div className="muted">Not a git repository.</div>;
  return (
    <div className="muted" style={{ marginBottom: 8, overflowWrap: "anywhere" }}>
      On <span data-testid="git-branch">{st.branch ?? "detached HEAD"}</span>
      {st.base ? <> · base {st.base.ref}</> : null}
      {st.ahead || st.behind ? (
        <span className="counter-nums">
          {" "}
          · {st.ahead} ahead, {st.behind} behind
        </span>
      ) : null}
    </div>
  );
}

function ReviewPanel(props: { ws: Workspace }) {
  const [refresh, setRefresh] = useState(0);
  const load = useFetched<GitDiff>(`/api/workspaces/${encodeURIComponent(props.ws.id)}/git/diff`, refresh);
  const header = (
    <div className="section-title" style={{ display: "flex", alignItems: "center" }}>
      <span style={{ flex: 1 }}>
        Changes{load.state === "ok" && load.data.base ? ` against ${load.data.base.ref}` : ""}
      </span>
      <IconButton label="Refresh diff" onClick={() => setRefresh((r) => r + 1)}>
        <RefreshCw size={13} />
      </IconButton>
    </div>
  );
  const branch = <BranchLine ws={props.ws} refresh={refresh} />;
  if (load.state === "loading") return <>{header}{branch}<div className="muted">Loading…</div></>;
  if (load.state === "error") return <>{header}{branch}<div className="form-error">{load.message}</div></>;
  const d = load.data;
  const adds = d.files.reduce((n, f) => n + f.additions, 0);
  const dels = d.files.reduce((n, f) => n + f.deletions, 0);
  return (
    <>
      {header}
      {branch}
      {d.files.length === 0 ? <div className="muted">No changes.</div> : null}
      {d.files.length > 0 ? (
        <div className="counter-nums" style={{ marginBottom: 6 }}>
          {d.files.length} file{d.files.length === 1 ? "" : "s"} <span className="adds">+{adds}</span>{" "}
          <span className="dels">-{dels}</span>
        </div>
      ) : null}
      <ul className="file-list" aria-label="Changed files">
        {d.files.map((f) => (
          <li key={f.path}>
            <span className="path">{f.path}</span>
            <span className="counter-nums">
              {f.binary ? (
                "binary"
              ) : (
                <>
                  <span className="adds">+{f.additions}</span> <span className="dels">-{f.deletions}</span>
                </>
              )}
            </span>
          </li>
        ))}
      </ul>
      {d.diff ? <DiffView diff={d.diff} label="Workspace diff" /> : null}
      {d.truncated ? <div className="faint">The diff was cut at the server's limit.</div> : null}
    </>
  );
}

export function RightSidebar(props: { ws: Workspace }) {
  const tab = useStore(app, (s) => s.rightTab);
  const drawer = useStore(app, (s) => s.rightDrawer);
  return (
    <aside className="right-sidebar" aria-label="Workspace details">
      <div className="tabs" role="tablist">
        <button type="button" role="tab" aria-selected={tab === "costs"} className={`tab ${tab === "costs" ? "active" : ""}`} onClick={() => app.update({ rightTab: "costs" })}>
          Costs
        </button>
        {props.ws.scratch ? null : (
          <button type="button" role="tab" aria-selected={tab === "review"} className={`tab ${tab === "review" ? "active" : ""}`} onClick={() => app.update({ rightTab: "review" })}>
            Review
          </button>
        )}
        <span style={{ flex: 1 }} />
        {drawer ? (
          <IconButton label="Close panel" onClick={() => app.update({ rightOpen: false })}>
            <X size={16} />
          </IconButton>
        ) : null}
      </div>
      <div className="panel" role="tabpanel">
        {tab === "costs" || props.ws.scratch ? <CostsPanel key={props.ws.id} ws={props.ws} /> : <ReviewPanel key={props.ws.id} ws={props.ws} />}
      </div>
    </aside>
  );
}
