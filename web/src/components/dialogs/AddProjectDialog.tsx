// Add a project: a directory on the server's machine, typed (an absolute path or `~/...`) or
// picked in a small folder browser (`GET /api/fs/dirs`, one folder's subdirectories at a time).

import { ArrowUp, Folder } from "lucide-react";
import { useEffect, useState } from "react";
import { api, errorMessage } from "../../api/http";
import type { DirListing } from "../../api/types";
import { useStore } from "../../lib/store";
import { app, openDialog } from "../../state/app";
import { addProject } from "../../state/actions";
import { FormDialog } from "./FormDialog";

function FolderBrowser(props: { start: string; onPick: (path: string) => void }) {
  const [at, setAt] = useState(props.start);
  const [listing, setListing] = useState<DirListing | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    api<DirListing>("GET", `/api/fs/dirs?path=${encodeURIComponent(at)}`)
      .then((l) => {
        if (!live) return;
        setListing(l);
        setError(null);
        props.onPick(l.path);
      })
      .catch((exc: unknown) => live && setError(errorMessage(exc)));
    return () => {
      live = false;
    };
    // Only a new folder asks again; onPick changes on every render of the dialog.
  }, [at]);
  const join = (name: string) => (listing ? `${listing.path.replace(/\/$/, "")}/${name}` : name);
  return (
    <div className="folder-browser" role="group" aria-label="Folder browser">
      <div className="folder-at counter-nums" data-testid="folder-at">
        {listing?.path ?? at}
      </div>
      {error ? <div className="form-error">{error}</div> : null}
      <ul className="folder-list">
        {listing?.parent ? (
          <li>
            <button type="button" className="menu-item" onClick={() => setAt(listing.parent ?? "/")}>
              <ArrowUp size={13} aria-hidden /> Parent folder
            </button>
          </li>
        ) : null}
        {listing?.dirs.map((d) => (
          <li key={d}>
            <button type="button" className="menu-item" onClick={() => setAt(join(d))}>
              <Folder size={13} aria-hidden /> {d}
            </button>
          </li>
        ))}
        {listing && listing.dirs.length === 0 ? <li className="faint">No folders here.</li> : null}
        {listing?.truncated ? <li className="faint">More folders are not listed: type the path.</li> : null}
      </ul>
    </div>
  );
}

export function AddProjectDialog() {
  const [path, setPath] = useState("");
  const [browsing, setBrowsing] = useState(false);
  const canBrowse = useStore(app, (s) => s.caps.dirs);
  const typed = path.trim();
  const start = typed.startsWith("/") || typed === "~" || typed.startsWith("~/") ? typed : "~";
  return (
    <FormDialog
      title="Add project"
      formId="add-project"
      submitLabel="Add"
      canSubmit={Boolean(typed)}
      onSubmit={async () => {
        const project = await addProject(typed);
        openDialog({ kind: "new-workspace", projectPath: project.path });
      }}
    >
      <label className="field">
        <span>Directory on the server's machine (its git toplevel becomes the project)</span>
        <input
          className="input"
          value={path}
          onChange={(e) => setPath(e.target.value)}
          placeholder="~/src/repo or /home/me/src/repo"
          aria-label="Project directory"
          data-autofocus
        />
      </label>
      {canBrowse ? (
        browsing ? (
          <FolderBrowser start={start} onPick={setPath} />
        ) : (
          <button type="button" className="btn" onClick={() => setBrowsing(true)}>
            <Folder size={14} aria-hidden /> Browse folders…
          </button>
        )
      ) : null}
    </FormDialog>
  );
}
