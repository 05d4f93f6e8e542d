// Projects and their workspaces with live status; create, fork, archive and delete.

import { Archive, ArchiveRestore, FolderPlus, GitFork, Plug, Plus, Settings, Trash2, X } from "lucide-react";
import type { Project, Workspace } from "../api/types";
import { externalLabel } from "../lib/externalAgents";
import { isMacPlatform, shortcutLabel } from "../lib/keybinds";
import { useStore } from "../lib/store";
import { app, openDialog, selectWorkspace, toast } from "../state/app";
import { branches, shownBranch } from "../state/branches";
import { archiveWorkspace } from "../state/actions";
import { externalAgents } from "../state/externalAgents";
import { openScratchDraft } from "../state/scratch";
import { errorMessage } from "../api/http";
import { StatusDot, statusKind } from "./StatusDot";
import { InboxButton, InboxPanel } from "./InboxPanel";
import { IconButton } from "./Tooltip";

const mac = typeof navigator !== "undefined" && isMacPlatform(navigator.platform);

function WorkspaceRow(props: { ws: Workspace; selected: boolean }) {
  const ws = props.ws;
  const status = useStore(app, (s) => s.statuses[ws.id] ?? ws.status);
  const branch = useStore(branches, (all) => shownBranch(all, ws.id, ws.branch));
  const kind = statusKind(status);
  const archived = ws.archivedAt !== null;
  const caps = useStore(app, (s) => s.caps);
  const external = useStore(externalAgents, (all) => externalLabel(ws, all));
  // Compacted while idle, and nothing has happened since.
  const idleCompacted = typeof ws.idleCompactedSeq === "number" && ws.idleCompactedSeq >= status.lastSeq;
  const archive = () => {
    archiveWorkspace(ws.id, !archived).catch((exc: unknown) => toast(errorMessage(exc)));
  };
  return (
    <div
      className={`ws-row ${props.selected ? "selected" : ""} ${kind === "unread" ? "unread" : ""}`}
      role="button"
      tabIndex={0}
      aria-current={props.selected ? "true" : undefined}
      data-workspace-id={ws.id}
      data-status={kind}
      onClick={() => selectWorkspace(ws.id)}
      onKeyDown={(e) => {
        if ((e.key === "Enter" || e.key === " ") && e.target === e.currentTarget) {
          e.preventDefault();
          selectWorkspace(ws.id);
        }
      }}
    >
      <StatusDot status={status} />
      <span className="ws-text">
        <span className="ws-title">
          {ws.title || ws.name}
          {idleCompacted ? (
            <span className="idle-badge" role="img" aria-label="Compacted while idle" title="Compacted while idle">
              {" "}
              💤📦
            </span>
          ) : null}
        </span>
        <span className="ws-sub">
          {ws.scratch ? "scratch chat" : ws.runtime.type === "ssh" ? `ssh ${ws.runtime.host}` : ws.runtime.type}
          {external ? <span data-testid="external-agent"> · {external}</span> : null}
          {branch && branch !== ws.title && branch !== ws.name ? ` · ${branch}` : ""}
        </span>
      </span>
      <span className="ws-actions" onClick={(e) => e.stopPropagation()} onKeyDown={(e) => e.stopPropagation()}>
        {!archived && caps.fork && !ws.scratch ? (
          <IconButton label="Fork workspace" onClick={() => openDialog({ kind: "fork", workspaceId: ws.id })}>
            <GitFork size={14} />
          </IconButton>
        ) : null}
        {!archived && caps.mcp ? (
          <IconButton label="Workspace MCP servers" onClick={() => openDialog({ kind: "workspace-mcp", workspaceId: ws.id })}>
            <Plug size={14} />
          </IconButton>
        ) : null}
        {caps.archive ? (
          <IconButton label={archived ? "Unarchive workspace" : "Archive workspace"} onClick={archive}>
            {archived ? <ArchiveRestore size={14} /> : <Archive size={14} />}
          </IconButton>
        ) : null}
        {caps.delete ? (
          <IconButton label="Delete workspace" onClick={() => openDialog({ kind: "delete", workspaceId: ws.id })}>
            <Trash2 size={14} />
          </IconButton>
        ) : null}
      </span>
    </div>
  );
}

function ProjectGroup(props: { project: Project; workspaces: Workspace[]; selectedId: string | null }) {
  return (
    <div className="project" data-project={props.project.path}>
      <div className="project-header">
        <span className="name">{props.project.name}</span>
        <IconButton
          label={`New workspace in ${props.project.name}`}
          shortcut={shortcutLabel("NEW_WORKSPACE", mac)}
          onClick={() => openDialog({ kind: "new-workspace", projectPath: props.project.path })}
        >
          <Plus size={15} />
        </IconButton>
      </div>
      {props.workspaces.length === 0 ? (
        <div className="faint" style={{ padding: "2px 14px 4px 36px", fontSize: 12 }}>No workspaces</div>
      ) : null}
      {props.workspaces.map((w) => (
        <WorkspaceRow key={w.id} ws={w} selected={w.id === props.selectedId} />
      ))}
    </div>
  );
}

export function LeftSidebar() {
  const projects = useStore(app, (s) => s.projects);
  const workspaces = useStore(app, (s) => s.workspaces);
  const selectedId = useStore(app, (s) => s.selectedId);
  const showArchived = useStore(app, (s) => s.showArchived);
  const connection = useStore(app, (s) => s.connection);
  const narrow = useStore(app, (s) => s.narrow);
  const live = workspaces.filter((w) => w.archivedAt === null);
  const archived = workspaces.filter((w) => w.archivedAt !== null);
  const chats = live.filter((w) => w.scratch);
  const orphans = live.filter((w) => !w.scratch && !projects.some((p) => p.path === w.projectPath));
  return (
    <nav className="left-sidebar" aria-label="Projects and workspaces">
      <div className="sidebar-header">
        <span className="brand">xum</span>
        <InboxButton />
        <IconButton label="Add project" onClick={() => openDialog({ kind: "add-project" })}>
          <FolderPlus size={16} />
        </IconButton>
        <IconButton
          label="New workspace"
          shortcut={shortcutLabel("NEW_WORKSPACE", mac)}
          onClick={() => openDialog({ kind: "new-workspace", projectPath: null })}
        >
          <Plus size={16} />
        </IconButton>
        {narrow ? (
          <IconButton label="Close sidebar" onClick={() => app.update({ leftOpen: false })}>
            <X size={16} />
          </IconButton>
        ) : null}
      </div>
      <InboxPanel />
      <div className="sidebar-scroll">
        {projects.length === 0 ? (
          <div className="empty-state" style={{ fontSize: 13 }}>
            Add a project (a directory, usually a git repository) to create workspaces in it.
            <div style={{ marginTop: 10 }}>
              <button type="button" className="btn" onClick={() => openDialog({ kind: "add-project" })}>
                <FolderPlus size={14} /> Add project
              </button>
            </div>
          </div>
        ) : null}
        {projects.map((p) => (
          <ProjectGroup
            key={p.path}
            project={p}
            workspaces={live.filter((w) => w.projectPath === p.path)}
            selectedId={selectedId}
          />
        ))}
        <div className="project" data-chats>
          <div className="project-header">
            <span className="name">Chats</span>
            <IconButton label="New scratch chat" shortcut={shortcutLabel("NEW_SCRATCH_CHAT", mac)} onClick={openScratchDraft}>
              <Plus size={15} />
            </IconButton>
          </div>
          {chats.map((w) => (
            <WorkspaceRow key={w.id} ws={w} selected={w.id === selectedId} />
          ))}
        </div>
        {orphans.map((w) => (
          <WorkspaceRow key={w.id} ws={w} selected={w.id === selectedId} />
        ))}
        {archived.length > 0 ? (
          <div className="project">
            <button
              type="button"
              className="project-header"
              style={{ border: "none", background: "transparent", width: "100%", cursor: "pointer" }}
              aria-expanded={showArchived}
              onClick={() => app.update({ showArchived: !showArchived })}
            >
              <span className="name" style={{ textAlign: "left" }}>
                Archived <span className="counter-nums">({archived.length})</span>
              </span>
            </button>
            {showArchived ? archived.map((w) => <WorkspaceRow key={w.id} ws={w} selected={w.id === selectedId} />) : null}
          </div>
        ) : null}
      </div>
      <div className="sidebar-footer">
        <IconButton
          label="Settings"
          shortcut={shortcutLabel("OPEN_SETTINGS", mac)}
          onClick={() => openDialog({ kind: "settings" })}
        >
          <Settings size={16} />
        </IconButton>
        <span className={`connection ${connection}`} role="status" data-connection={connection}>
          {connection === "open" ? "connected" : connection === "connecting" ? "connecting…" : "reconnecting…"}
        </span>
      </div>
    </nav>
  );
}
