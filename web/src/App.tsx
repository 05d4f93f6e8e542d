import { FolderPlus, Menu as MenuIcon, Plus, X } from "lucide-react";
import { useEffect } from "react";
import { ChatView } from "./components/chat/ChatView";
import { ScratchDraft } from "./components/chat/ScratchDraft";
import { ConnectionBanner } from "./components/ConnectionBanner";
import { AddProjectDialog } from "./components/dialogs/AddProjectDialog";
import { DeleteDialog } from "./components/dialogs/DeleteDialog";
import { ForkDialog } from "./components/dialogs/ForkDialog";
import { NewWorkspaceDialog } from "./components/dialogs/NewWorkspaceDialog";
import { RenameDialog } from "./components/dialogs/RenameDialog";
import { SettingsDialog } from "./components/dialogs/SettingsDialog";
import { WorkspaceMcpDialog } from "./components/mcp/WorkspaceMcpDialog";
import { LeftSidebar } from "./components/LeftSidebar";
import { Palette } from "./components/Palette";
import { ProviderNotice } from "./components/ProviderNotice";
import { RightSidebar } from "./components/RightSidebar";
import { SignIn } from "./components/SignIn";
import { IconButton } from "./components/Tooltip";
import { useGlobalKeybinds } from "./components/useGlobalKeybinds";
import { isMacPlatform, shortcutLabel } from "./lib/keybinds";
import { useStore } from "./lib/store";
import { app, boot, openDialog, selectedWorkspace, toast } from "./state/app";

const mac = typeof navigator !== "undefined" && isMacPlatform(navigator.platform);

function Dialogs() {
  const dialog = useStore(app, (s) => s.dialog);
  switch (dialog.kind) {
    case "none":
      return null;
    case "new-workspace":
      return <NewWorkspaceDialog projectPath={dialog.projectPath} />;
    case "add-project":
      return <AddProjectDialog />;
    case "delete":
      return <DeleteDialog workspaceId={dialog.workspaceId} />;
    case "fork":
      return <ForkDialog workspaceId={dialog.workspaceId} />;
    case "rename":
      return <RenameDialog workspaceId={dialog.workspaceId} />;
    case "settings":
      return <SettingsDialog />;
    case "workspace-mcp":
      return <WorkspaceMcpDialog workspaceId={dialog.workspaceId} />;
  }
}

/** No workspace on screen. On a first run this is the guide: add the project to work on (with
 *  `make run`, xum's own checkout is already there, so adding yours comes first), then make a
 *  workspace in it; and, while no provider is usable, where the key goes. */
function NoWorkspace() {
  const projects = useStore(app, (s) => s.projects);
  const anyWorkspace = useStore(app, (s) => s.workspaces.some((w) => w.archivedAt === null));
  return (
    <div className="main">
      <div className="chat-header">
        <IconButton label="Toggle sidebar" onClick={() => app.update({ leftOpen: !app.get().leftOpen })}>
          <MenuIcon size={18} />
        </IconButton>
        <div className="chat-title">
          <span className="t">xum</span>
        </div>
      </div>
      <ConnectionBanner />
      <div className="empty-state first-steps" data-testid="first-steps">
        <p>{anyWorkspace ? "Pick a workspace in the sidebar, or start another one:" : "Start an agent in two steps:"}</p>
        <ol className="steps">
          <li>
            <span>
              <strong>Add your project</strong>: a directory on the server's machine, usually a git repository.
              {projects.length > 0 ? (
                <span className="faint" data-testid="known-projects">
                  {" "}
                  Added so far: {projects.map((p) => p.name).join(", ")}.
                </span>
              ) : null}
            </span>
            <button
              type="button"
              className={`btn ${anyWorkspace ? "" : "btn-primary"}`}
              onClick={() => openDialog({ kind: "add-project" })}
            >
              <FolderPlus size={14} aria-hidden /> Add project
            </button>
          </li>
          <li>
            <span>
              <strong>Create a workspace</strong> in it: the agent works there, by default on a new branch in its
              own git worktree.
            </span>
            <button
              type="button"
              className="btn"
              disabled={projects.length === 0}
              onClick={() => openDialog({ kind: "new-workspace", projectPath: null })}
            >
              <Plus size={14} aria-hidden /> New workspace
            </button>
          </li>
        </ol>
        <ProviderNotice />
        <p className="faint kbd-hint">
          <kbd>{shortcutLabel("OPEN_PALETTE", mac)}</kbd> opens the command palette.
        </p>
      </div>
    </div>
  );
}

function Toast() {
  const message = useStore(app, (s) => s.toast);
  if (!message) return null;
  return (
    <div className="toast" role="alert">
      <span>{message}</span>
      <IconButton label="Dismiss" onClick={() => toast(null)}>
        <X size={14} />
      </IconButton>
    </div>
  );
}

function Workspace() {
  const ws = useStore(app, selectedWorkspace);
  const leftOpen = useStore(app, (s) => s.leftOpen);
  const rightOpen = useStore(app, (s) => s.rightOpen);
  const draft = useStore(app, (s) => s.scratchDraft);
  return (
    <div className="layout">
      <div className="column">{leftOpen ? <LeftSidebar /> : null}</div>
      {leftOpen ? (
        <button type="button" aria-label="Close sidebar" className="drawer-backdrop left open" onClick={() => app.update({ leftOpen: false })} />
      ) : null}
      {ws ? <ChatView workspace={ws} /> : draft ? <ScratchDraft /> : <NoWorkspace />}
      <div className="column">{rightOpen && ws ? <RightSidebar ws={ws} /> : null}</div>
      {rightOpen && ws ? (
        <button type="button" aria-label="Close panel" className="drawer-backdrop right open" onClick={() => app.update({ rightOpen: false })} />
      ) : null}
    </div>
  );
}

export function App() {
  const auth = useStore(app, (s) => s.auth);
  const paletteOpen = useStore(app, (s) => s.paletteOpen);
  useGlobalKeybinds();
  useEffect(() => {
    void boot();
  }, []);
  if (auth === "checking") return null;
  if (auth === "signed-out") return <SignIn />;
  return (
    <>
      <Workspace />
      {paletteOpen ? <Palette /> : null}
      <Dialogs />
      <Toast />
    </>
  );
}
