// Settings → MCP: the servers of ~/.xum/mcp.jsonc and of a project's .xum/mcp.jsonc (add,
// edit, remove, Test with the connection error shown inline) and the tool search switch.
// Environment and header values are write-only: the form lists saved names, and a line with
// only a NAME keeps the saved value.

import { useEffect, useState, type ReactNode } from "react";
import { errorMessage } from "../../api/http";
import {
  deleteMcpServer,
  getMcp,
  parseVariables,
  putMcpServer,
  setToolSearch,
  signOutMcp,
  startMcpSignIn,
  testMcpServer,
  type McpFile,
  type McpScope,
  type McpServerRow,
  type McpSettings,
  type McpTestResult,
} from "../../api/mcp";
import type { Project } from "../../api/types";
import { FormError, ProjectSelect } from "../FormParts";

interface Editing {
  scope: McpScope;
  row: McpServerRow | null;
}

function ServerForm(props: {
  editing: Editing;
  project: string | null;
  onSaved: (s: McpSettings) => void;
  onCancel: () => void;
}) {
  const row = props.editing.row;
  const [name, setName] = useState(row?.name ?? "");
  const [transport, setTransport] = useState<"stdio" | "http">(row?.transport ?? "stdio");
  const [target, setTarget] = useState(row?.command ?? row?.url ?? "");
  const [vars, setVars] = useState([...(row?.envNames ?? []), ...(row?.headerNames ?? [])].join("\n"));
  const [timeout, setTimeoutSecs] = useState(row && row.timeoutSecs !== 300 ? String(row.timeoutSecs) : "");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      const values = parseVariables(vars);
      const seconds = timeout.trim() ? Number(timeout) : null;
      if (seconds !== null && !(seconds > 0)) throw new Error("The timeout is a number of seconds above 0.");
      props.onSaved(
        await putMcpServer({
          name: name.trim(),
          scope: props.editing.scope,
          project: props.editing.scope === "repo" ? props.project : null,
          ...(transport === "stdio" ? { command: target.trim(), env: values } : { url: target.trim(), headers: values }),
          timeoutSecs: seconds,
        }),
      );
    } catch (exc) {
      setError(errorMessage(exc));
    } finally {
      setBusy(false);
    }
  };
  const where = props.editing.scope === "global" ? "global" : "repository";
  const label = row ? `Edit ${where} MCP server ${row.name}` : `Add a ${where} MCP server`;
  return (
    <form
      className="mcp-form"
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <div className="mcp-form-title">{label}</div>
      <label className="field">
        <span>Name</span>
        <input className="input" value={name} onChange={(e) => setName(e.target.value)} aria-label="Server name" disabled={Boolean(row)} />
      </label>
      <label className="field">
        <span>Transport</span>
        <select className="input" value={transport} onChange={(e) => setTransport(e.target.value as "stdio" | "http")} aria-label="Transport">
          <option value="stdio">Command (stdio)</option>
          <option value="http">URL (streamable HTTP)</option>
        </select>
      </label>
      <label className="field">
        <span>{transport === "stdio" ? "Command" : "URL"}</span>
        <input
          className="input"
          value={target}
          onChange={(e) => setTarget(e.target.value)}
          aria-label={transport === "stdio" ? "Server command" : "Server URL"}
          placeholder={transport === "stdio" ? "npx -y @modelcontextprotocol/server-memory" : "https://example.com/mcp"}
        />
      </label>
      <label className="field">
        <span>{transport === "stdio" ? "Environment" : "Headers"} (NAME=value per line; a NAME alone keeps its saved value)</span>
        <textarea className="input" rows={3} value={vars} onChange={(e) => setVars(e.target.value)} aria-label="Variables" spellCheck={false} />
      </label>
      <label className="field">
        <span>Tool call timeout in seconds (default 300)</span>
        <input className="input" value={timeout} onChange={(e) => setTimeoutSecs(e.target.value)} aria-label="Timeout" inputMode="decimal" />
      </label>
      <div className="inline-form">
        <button type="submit" className="btn primary" disabled={busy || !name.trim() || !target.trim()}>
          Save server
        </button>
        <button type="button" className="btn" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
      <FormError message={error} />
    </form>
  );
}

function ServerRow(props: {
  row: McpServerRow;
  project: string | null;
  canTest: boolean;
  onEdit: () => void;
  onChanged: (s: McpSettings) => void;
  onError: (message: string) => void;
}) {
  const r = props.row;
  const [result, setResult] = useState<McpTestResult | null>(null);
  const [testing, setTesting] = useState(false);
  const project = r.scope === "repo" ? props.project : null;
  const test = async () => {
    setTesting(true);
    setResult(null);
    try {
      setResult(await testMcpServer(r.name, r.scope, project));
    } catch (exc) {
      setResult({ ok: false, error: errorMessage(exc), tools: [], prompts: [] });
    } finally {
      setTesting(false);
    }
  };
  const [signIn, setSignIn] = useState<{ ok: boolean; text: string } | null>(null);
  // The tab is opened at the click (a popup opened after an await is blocked), then sent to the
  // authorization server; it ends on xum's callback page, which says whether it worked.
  const startSignIn = async () => {
    const tab = window.open("about:blank", "_blank");
    setSignIn(null);
    try {
      const started = await startMcpSignIn(r.name, r.scope, project);
      if (started.authorizationUrl && tab) {
        tab.opener = null;
        tab.location.href = started.authorizationUrl;
        setSignIn({ ok: true, text: "Sign-in opened in a new tab: finish it there. Workspaces use the server from their next message on." });
      } else if (started.authorizationUrl) {
        setSignIn({ ok: true, text: `Open this address to sign in: ${started.authorizationUrl}` });
      } else {
        tab?.close();
        setSignIn({ ok: true, text: "Already signed in." });
      }
    } catch (exc) {
      tab?.close();
      setSignIn({ ok: false, text: errorMessage(exc) });
    }
  };
  const signOut = async () => {
    try {
      await signOutMcp(r.name, r.scope, project);
      setSignIn({ ok: true, text: "Signed out: the stored tokens were removed." });
    } catch (exc) {
      setSignIn({ ok: false, text: errorMessage(exc) });
    }
  };
  const remove = async () => {
    try {
      props.onChanged(await deleteMcpServer(r.name, r.scope, project));
    } catch (exc) {
      props.onError(errorMessage(exc));
    }
  };
  return (
    <div className="mcp-server" data-mcp-server={r.name}>
      <div className="list-row">
        <span className="grow">
          <strong>{r.name}</strong> <code className="faint">{r.command ?? r.url}</code>
          {[...r.envNames, ...r.headerNames].length ? (
            <span className="faint"> · {[...r.envNames, ...r.headerNames].join(", ")}</span>
          ) : null}
        </span>
        {props.canTest ? (
          <button type="button" className="btn" disabled={testing} onClick={() => void test()}>
            {testing ? "Testing…" : "Test"}
          </button>
        ) : null}
        {props.canTest && r.transport === "http" ? (
          <>
            <button type="button" className="btn" onClick={() => void startSignIn()} aria-label={`Sign in to ${r.name}`}>
              Sign in
            </button>
            <button type="button" className="btn" onClick={() => void signOut()} aria-label={`Sign out of ${r.name}`}>
              Sign out
            </button>
          </>
        ) : null}
        <button type="button" className="btn" onClick={props.onEdit}>
          Edit
        </button>
        <button type="button" className="btn" onClick={() => void remove()} aria-label={`Remove ${r.name}`}>
          Remove
        </button>
      </div>
      {signIn ? (
        <div className={signIn.ok ? "mcp-test ok" : "form-error"} role={signIn.ok ? "status" : "alert"} data-testid="mcp-sign-in">
          {signIn.text}
        </div>
      ) : null}
      {result ? (
        <div className={result.ok ? "mcp-test ok" : "form-error"} role={result.ok ? "status" : "alert"} data-testid="mcp-test-result">
          {result.ok
            ? `Connected: ${result.tools.length} tool${result.tools.length === 1 ? "" : "s"} (${result.tools.map((t) => t.name).join(", ") || "none"})` +
              (result.prompts.length ? `; prompts: ${result.prompts.join(", ")}` : "")
            : `Connection failed: ${result.error ?? "unknown error"}`}
        </div>
      ) : null}
    </div>
  );
}

function FileBlock(props: {
  title: string;
  file: McpFile;
  scope: McpScope;
  project: string | null;
  canTest: boolean;
  note?: string;
  onEdit: (e: Editing) => void;
  onChanged: (s: McpSettings) => void;
  onError: (message: string) => void;
  /** The add or edit form of a server of this file, shown in this file's block. */
  form?: ReactNode;
}) {
  return (
    <div className="mcp-file" data-testid={`mcp-${props.scope}`}>
      <div className="section-title">
        {props.title} <code className="faint">{props.file.path}</code>
      </div>
      {props.note ? <div className="muted">{props.note}</div> : null}
      {props.file.problems.map((p) => (
        <div className="form-error" key={p}>
          {p}
        </div>
      ))}
      {props.file.servers.map((row) => (
        <ServerRow
          key={row.name}
          row={row}
          project={props.project}
          canTest={props.canTest}
          onEdit={() => props.onEdit({ scope: props.scope, row })}
          onChanged={props.onChanged}
          onError={props.onError}
        />
      ))}
      {props.file.servers.length === 0 ? <div className="muted">No servers.</div> : null}
      {props.form ?? (
        <button type="button" className="btn" onClick={() => props.onEdit({ scope: props.scope, row: null })}>
          Add {props.scope === "global" ? "a global" : "a repository"} server
        </button>
      )}
    </div>
  );
}

export function McpSettingsSection(props: { projects: Project[] }) {
  const [picked, setProject] = useState<string>("");
  // The projects may arrive after the dialog opened: until one is picked, the first one.
  const project = picked || props.projects[0]?.path || "";
  const [settings, setSettings] = useState<McpSettings | null>(null);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    getMcp(project || null)
      .then(setSettings)
      .catch((exc: unknown) => setError(errorMessage(exc)));
  }, [project]);
  // A change to the global file answers without the project's file: keep the one shown.
  const merge = (s: McpSettings) => setSettings((old) => ({ ...s, repo: s.repo ?? old?.repo ?? null }));
  const changed = (s: McpSettings) => {
    merge(s);
    setEditing(null);
    setError(null);
  };
  const toggleSearch = async () => {
    if (!settings) return;
    try {
      merge(await setToolSearch(!settings.toolSearch));
    } catch (exc) {
      setError(errorMessage(exc));
    }
  };
  const repo = settings?.repo ?? null;
  // The form opens in the block of the file it writes (global or the repository's).
  const formFor = (scope: McpScope): ReactNode =>
    editing?.scope === scope ? (
      <ServerForm
        key={`${editing.scope}:${editing.row?.name ?? ""}`}
        editing={editing}
        project={repo?.project ?? null}
        onSaved={changed}
        onCancel={() => setEditing(null)}
      />
    ) : null;
  return (
    <section className="settings-section" aria-label="MCP" data-testid="mcp-settings">
      <h3>MCP servers</h3>
      <p className="muted" style={{ marginTop: 0 }}>
        Servers give agents extra tools. Each workspace runs its own server processes, started with its first message and
        stopped after 10 idle minutes; changes apply on the next message.
      </p>
      {settings ? (
        <label className="list-row">
          <input type="checkbox" checked={settings.toolSearch} onChange={() => void toggleSearch()} aria-label="Tool search" />
          <span className="grow">
            Tool search: keep MCP tools out of the tool list until the agent finds them with <code>tool_catalog_search</code>{" "}
            (off: every MCP tool is offered up front)
          </span>
        </label>
      ) : (
        <div className="muted">Loading…</div>
      )}
      {settings ? (
        <FileBlock
          title="Global"
          file={settings.globalConfig}
          scope="global"
          project={null}
          canTest
          onEdit={setEditing}
          onChanged={changed}
          onError={setError}
          form={formFor("global")}
        />
      ) : null}
      {props.projects.length > 0 ? (
        <ProjectSelect projects={props.projects} value={project} onChange={setProject} label="MCP project" />
      ) : null}
      {repo ? (
        <FileBlock
          title="Repository"
          file={repo}
          scope="repo"
          project={repo.project}
          canTest={repo.trusted}
          note={repo.trusted ? undefined : "This project is not trusted: its servers do not start (see Trust below)."}
          onEdit={setEditing}
          onChanged={changed}
          onError={setError}
          form={formFor("repo")}
        />
      ) : null}
      <FormError message={error} />
    </section>
  );
}
