import { GitBranch, Menu as MenuIcon, PanelRight, Server } from "lucide-react";
import type { Workspace } from "../../api/types";
import { externalLabel } from "../../lib/externalAgents";
import { isMacPlatform, shortcutLabel } from "../../lib/keybinds";
import { useStore } from "../../lib/store";
import { useEffect } from "react";
import { app, transcriptStore } from "../../state/app";
import { activity } from "../../state/activity";
import { branches, refreshBranch, shownBranch } from "../../state/branches";
import { externalAgents } from "../../state/externalAgents";
import { ConnectionBanner, useOffline } from "../ConnectionBanner";
import { StatusDot, statusKind, statusLabel } from "../StatusDot";
import { IconButton } from "../Tooltip";
import { ApprovalCards } from "./ApprovalCard";
import { BackgroundStrip } from "./BackgroundStrip";
import { Composer } from "./Composer";
import { NotifyBell } from "./NotifyBell";
import { PortsLabel } from "./PortsLabel";
import { Transcript } from "./Transcript";

const mac = typeof navigator !== "undefined" && isMacPlatform(navigator.platform);

function runtimeLabel(ws: Workspace): string {
  if (ws.scratch) return "scratch chat";
  if (ws.runtime.type === "ssh") return `ssh ${ws.runtime.host}`;
  if (ws.runtime.type === "docker") return `docker ${ws.runtime.image}`;
  return ws.runtime.type;
}

const PHASES = { model: "replying", tools: "running tools", compacting: "compacting" } as const;

export function ChatView(props: { workspace: Workspace }) {
  const ws = props.workspace;
  const status = useStore(app, (s) => s.statuses[ws.id] ?? ws.status);
  const offline = useOffline();
  const kind = offline ? "offline" : statusKind(status);
  const branch = useStore(branches, (all) => shownBranch(all, ws.id, ws.branch));
  const turnEnds = useStore(activity, (all) => all[ws.id]?.turnEnds ?? 0);
  const approvals = useStore(transcriptStore(ws.id), (t) => t.approvals.length);
  const external = useStore(externalAgents, (all) => externalLabel(ws, all));
  // Ask git on opening the workspace, after a rename (xum renames the branch) and each time a
  // turn of it ends: the agent may have switched branches.
  useEffect(() => {
    void refreshBranch(ws.id);
  }, [ws.id, ws.branch, turnEnds]);
  return (
    <div className="main" data-workspace-id={ws.id}>
      <div className="chat-header">
        <IconButton
          label="Toggle sidebar"
          shortcut={shortcutLabel("TOGGLE_SIDEBAR", mac)}
          onClick={() => app.set((s) => ({ ...s, leftOpen: !s.leftOpen }))}
        >
          <MenuIcon size={18} />
        </IconButton>
        <div className="chat-title">
          <span className="t">
            {ws.title || ws.name}
            {external ? (
              <>
                {" "}
                <span className="badge" data-testid="external-agent" title="This workspace's agent is an external ACP agent">
                  {external}
                </span>
              </>
            ) : null}
          </span>
          <span className="s">
            <span style={{ display: "inline-flex", alignItems: "center", gap: 4 }}>
              <StatusDot status={status} offline={offline} />{" "}
              <span data-testid="workspace-state" data-state={kind}>
                {offline ? "offline" : kind === "waiting" && approvals > 0 ? "waiting for approval" : statusLabel(kind)}
                {!offline && status.state === "streaming" && status.phase
                  ? ` (${PHASES[status.phase]})`
                  : ""}
              </span>
              {" · "}
              <Server size={11} aria-hidden /> {runtimeLabel(ws)}
              {branch ? (
                <>
                  {" · "}
                  <GitBranch size={11} aria-hidden /> <span data-testid="branch">{branch}</span>
                </>
              ) : null}
              {ws.ports ? (
                <>
                  {" · "}
                  <PortsLabel ws={ws} />
                </>
              ) : null}
              {ws.scratch ? null : ` · ${ws.projectName}`}
            </span>
          </span>
        </div>
        <NotifyBell workspace={ws} />
        <IconButton
          label="Costs and review"
          shortcut={shortcutLabel("TOGGLE_RIGHT_SIDEBAR", mac)}
          onClick={() => app.set((s) => ({ ...s, rightOpen: !s.rightOpen }))}
        >
          <PanelRight size={18} />
        </IconButton>
      </div>
      <ConnectionBanner />
      <Transcript key={ws.id} workspaceId={ws.id} />
      <ApprovalCards workspaceId={ws.id} />
      <BackgroundStrip workspaceId={ws.id} />
      <Composer workspace={ws} />
    </div>
  );
}
