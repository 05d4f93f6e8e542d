// The workspace MCP dialog: turn servers off for this workspace only and narrow their tools,
// saved to the workspace's .xum/mcp.local.jsonc (kept out of git). The open session applies
// the change with its next message.

import { useEffect, useState } from "react";
import { errorMessage } from "../../api/http";
import {
  getWorkspaceMcp,
  parseToolList,
  putWorkspaceMcp,
  startMcpSignIn,
  type McpOverrideRow,
  type WorkspaceMcp,
} from "../../api/mcp";
import { useStore } from "../../lib/store";
import { app, closeDialog } from "../../state/app";
import { FormDialog } from "../dialogs/FormDialog";

interface Draft {
  enabled: boolean;
  tools: string;
}

/** A server that needs an OAuth sign-in: the button opens the authorization page in a new tab
 * (opened at the click, so no popup blocker stops it); the next message uses the server. */
function SignInButton(props: { row: McpOverrideRow; project: string | null }) {
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const start = async () => {
    const tab = window.open("about:blank", "_blank");
    try {
      const r = props.row;
      const started = await startMcpSignIn(r.name, r.scope, r.scope === "repo" ? props.project : null);
      if (started.authorizationUrl && tab) {
        tab.opener = null;
        tab.location.href = started.authorizationUrl;
        setNote({ ok: true, text: "Finish signing in in the new tab; the next message uses the server." });
      } else {
        tab?.close();
        setNote({ ok: true, text: started.authorizationUrl ? `Sign in at ${started.authorizationUrl}` : "Already signed in." });
      }
    } catch (exc) {
      tab?.close();
      setNote({ ok: false, text: errorMessage(exc) });
    }
  };
  return (
    <>
      <button type="button" className="btn" onClick={() => void start()} aria-label={`Sign in to ${props.row.name}`}>
        Sign in
      </button>
      {note ? (
        <div className={note.ok ? "mcp-test ok" : "form-error"} role={note.ok ? "status" : "alert"} data-testid="mcp-sign-in">
          {note.text}
        </div>
      ) : null}
    </>
  );
}

export function WorkspaceMcpDialog(props: { workspaceId: string }) {
  const project = useStore(app, (s) => s.workspaces.find((w) => w.id === props.workspaceId)?.projectPath ?? null);
  const [data, setData] = useState<WorkspaceMcp | null>(null);
  const [drafts, setDrafts] = useState<Record<string, Draft>>({});
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    getWorkspaceMcp(props.workspaceId)
      .then((d) => {
        setData(d);
        setDrafts(
          Object.fromEntries(d.servers.map((s) => [s.name, { enabled: s.enabled, tools: (s.allowedTools ?? []).join(", ") }])),
        );
      })
      .catch((exc: unknown) => setError(errorMessage(exc)));
  }, [props.workspaceId]);
  const set = (name: string, change: Partial<Draft>) =>
    setDrafts((all) => ({ ...all, [name]: { ...(all[name] ?? { enabled: true, tools: "" }), ...change } }));
  return (
    <FormDialog
      title="Workspace MCP servers"
      formId="workspace-mcp"
      submitLabel="Save"
      canSubmit={data !== null}
      onSubmit={async () => {
        const servers = Object.fromEntries(
          Object.entries(drafts).map(([name, d]) => [
            name,
            { enabled: d.enabled ? null : false, allowedTools: parseToolList(d.tools) },
          ]),
        );
        await putWorkspaceMcp(props.workspaceId, servers);
        closeDialog();
      }}
    >
      <p className="muted" style={{ marginTop: 0 }}>
        These settings apply to this workspace only and are saved in <code>{data?.path ?? ".xum/mcp.local.jsonc"}</code>, which
        git ignores. Leave the tool list empty to allow every tool of a server.
      </p>
      {error ? <div className="form-error">{error}</div> : null}
      {data?.servers.length === 0 ? <div className="muted">No MCP servers are configured (Settings → MCP).</div> : null}
      {data?.servers.map((s) => (
        <div className="mcp-override" key={s.name} data-mcp-server={s.name}>
          <label className="list-row">
            <input
              type="checkbox"
              checked={drafts[s.name]?.enabled ?? true}
              onChange={(e) => set(s.name, { enabled: e.target.checked })}
              aria-label={`Enable ${s.name}`}
            />
            <span className="grow">
              <strong>{s.name}</strong> <span className="faint">{s.scope}</span>
            </span>
            {s.status ? <span className={`badge ${s.status === "ready" ? "ok" : s.status === "failed" ? "bad" : ""}`}>{s.status}</span> : null}
          </label>
          {s.status === "needs-sign-in" ? <SignInButton row={s} project={project} /> : s.error ? <div className="form-error">{s.error}</div> : null}
          <input
            className="input"
            placeholder="Allowed tools (empty: all)"
            aria-label={`Allowed tools of ${s.name}`}
            value={drafts[s.name]?.tools ?? ""}
            onChange={(e) => set(s.name, { tools: e.target.value })}
          />
        </div>
      ))}
      {data?.withheld.length ? (
        <div className="muted">Not started (the project is not trusted): {data.withheld.join(", ")}</div>
      ) : null}
      {data?.problems.map((p) => (
        <div className="form-error" key={p}>
          {p}
        </div>
      ))}
    </FormDialog>
  );
}
