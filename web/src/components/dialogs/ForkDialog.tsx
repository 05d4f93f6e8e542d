import { useState } from "react";
import { useStore } from "../../lib/store";
import { app, closeDialog } from "../../state/app";
import { forkWorkspace } from "../../state/actions";
import { FormDialog } from "./FormDialog";

export function ForkDialog(props: { workspaceId: string }) {
  const ws = useStore(app, (s) => s.workspaces.find((w) => w.id === props.workspaceId));
  const [name, setName] = useState("");
  // A local workspace works in the project directory itself, so its fork shares it.
  const where =
    ws?.runtime.type === "local"
      ? "in the same project directory (a local workspace has no branch of its own)"
      : "on a new branch from this workspace's HEAD; uncommitted changes are not copied";
  return (
    <FormDialog
      title={`Fork ${ws?.title || ws?.name || "workspace"}`}
      formId="fork-ws"
      submitLabel="Fork"
      onSubmit={async () => {
        await forkWorkspace(props.workspaceId, name.trim() || undefined);
        closeDialog();
      }}
    >
      <p className="muted" style={{ marginTop: 0 }}>
        The fork copies the conversation, model, thinking level and mode, {where}.
      </p>
      <label className="field">
        <span>New workspace name (optional)</span>
        <input
          className="input"
          value={name}
          onChange={(e) => setName(e.target.value)}
          aria-label="Fork name"
          data-autofocus
        />
      </label>
    </FormDialog>
  );
}
