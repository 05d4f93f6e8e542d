// The workspace MCP dialog: turn servers off for this workspace only and narrow their tools,
// saved to the workspace's .xum/mcp.local.jsonc (kept out of git). The open session applies
// the change with its next message.

import { useEffect, useState } from "react";
import { errorMessage } from "../../api/http";
import { getWorkspaceMcp, parseToolList, putWorkspaceMcp, type WorkspaceMcp } from "../../api/mcp";
import { closeDialog } from "../../state/app";
import { FormDialog } from "../dialogs/FormDialog";

interface Draft {
  enabled: boolean;
  tools: string;
}

export function WorkspaceMcpDialog(props: { workspaceId: string }) {
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
          {s.error ? <div className="form-error">{s.error}</div> : null}
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
