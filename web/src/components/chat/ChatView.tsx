import { GitBranch, Menu as MenuIcon, PanelRight, Server } from "lucide-react";
import type { Workspace } from "../../api/types";
import { isMacPlatform, shortcutLabel } from "../../lib/keybinds";
import { useStore } from "../../lib/store";
import { app } from "../../state/app";
import { StatusDot, statusKind, statusLabel } from "../StatusDot";
import { IconButton } from "../Tooltip";
import { ApprovalCards } from "./ApprovalCard";
import { Composer } from "./Composer";
import { Transcript } from "./Transcript";

const mac = typeof navigator !== "undefined" && isMacPlatform(navigator.platform);

function runtimeLabel(ws: Workspace): string {
  if (ws.runtime.type === "ssh") return `ssh ${ws.runtime.host}`;
  return ws.runtime.type;
}

export function ChatView(props: { workspace: Workspace }) {
  const ws = props.workspace;
  const status = useStore(app, (s) => s.statuses[ws.id] ?? ws.status);
  const kind = statusKind(status);
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
          <span className="t">{ws.title || ws.name}</span>
          <span className="s">
            <span style={{ display: "inline-flex", alignItems: "center", gap: 4 }}>
              <StatusDot status={status} /> {statusLabel(kind)}
              {status.state === "streaming" && status.phase ? ` (${status.phase === "tools" ? "running tools" : "replying"})` : ""}
              {" · "}
              <Server size={11} aria-hidden /> {runtimeLabel(ws)}
              {ws.branch ? (
                <>
                  {" · "}
                  <GitBranch size={11} aria-hidden /> <span data-testid="branch">{ws.branch}</span>
                </>
              ) : null}
              {" · "}
              {ws.projectName}
            </span>
          </span>
        </div>
        <IconButton
          label="Costs and review"
          shortcut={shortcutLabel("TOGGLE_RIGHT_SIDEBAR", mac)}
          onClick={() => app.set((s) => ({ ...s, rightOpen: !s.rightOpen }))}
        >
          <PanelRight size={18} />
        </IconButton>
      </div>
      <Transcript key={ws.id} workspaceId={ws.id} />
      <ApprovalCards workspaceId={ws.id} />
      <Composer workspace={ws} />
    </div>
  );
}
