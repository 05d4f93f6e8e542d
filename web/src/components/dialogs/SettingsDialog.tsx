// Settings: providers (keys are write-only: the UI says where a key comes from, never what it
// is), models (the default model, custom models with catalog suggestions), project secrets
// (write-only values), project trust, safety (sandbox, read denylist, remembered approvals), the
// external agents config.json defines (read-only), and browser sessions.

import { useEffect, useState } from "react";
import { api, ApiError, errorMessage, qs } from "../../api/http";
import type { ModelsInfo, Project, ProviderRow, ServerSession } from "../../api/types";
import { useStore } from "../../lib/store";
import { app, closeDialog, loadModels, loadWorkspaces, signOut } from "../../state/app";
import { McpSettingsSection } from "../mcp/McpSettingsSection";
import { CustomModels, DefaultModelPicker } from "./CustomModels";
import { ModelFallbacks } from "./ModelFallbacks";
import { Modal } from "./Modal";
import { ExternalAgentsSection } from "./ExternalAgentSettings";
import { SafetySection } from "./SafetySettings";
import { FormError, ProjectSelect } from "../FormParts";

function credentialText(p: ProviderRow): string {
  if (!p.credentialSource) return "no key";
  if (p.credentialSource.startsWith("env:")) return `configured via ${p.credentialSource}`;
  if (p.credentialSource === "none needed") return "no key needed";
  return `set (${p.credentialSource})`;
}

/** Whether a provider is one the user set up (a custom one, a key, an entry in the file). */
function isSetUp(p: ProviderRow): boolean {
  return p.custom || p.configured || p.usable;
}

function ProviderItem(props: { row: ProviderRow; onChange: (row: ProviderRow) => void }) {
  const p = props.row;
  const [key, setKey] = useState("");
  const [baseUrl, setBaseUrl] = useState(p.baseUrl ?? "");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (fn: () => Promise<ProviderRow>) => {
    setBusy(true);
    setError(null);
    try {
      props.onChange(await fn());
      setKey("");
      void loadModels();
    } catch (exc) {
      setError(errorMessage(exc));
    } finally {
      setBusy(false);
    }
  };
  const path = `/api/settings/providers/${encodeURIComponent(p.id)}`;
  return (
    <div className="provider-row" data-provider={p.id}>
      <div className="head">
        <span className="grow">{p.displayName}</span>
        <span className={`badge ${p.usable ? "ok" : ""}`}>{p.usable ? "usable" : "not usable"}</span>
        <span className="muted" data-testid="credential">{credentialText(p)}</span>
      </div>
      {/* A provider nobody set up is not a problem, only a choice: its hint is not an error. */}
      {p.problem ? <div className={isSetUp(p) ? "form-error" : "muted provider-hint"}>{p.problem}</div> : null}
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (key) void run(() => api<ProviderRow>("PUT", `${path}/key`, { apiKey: key }));
        }}
      >
        {/* Write-only: the field starts empty and is cleared after saving. */}
        <input
          className="input"
          type="password"
          autoComplete="off"
          placeholder={p.credentialSource ? "Replace the API key" : "API key"}
          aria-label={`${p.displayName} API key`}
          value={key}
          onChange={(e) => setKey(e.target.value)}
        />
        <button type="submit" className="btn" disabled={busy || !key}>
          Save key
        </button>
        {p.credentialSource?.startsWith("providers.jsonc") ? (
          <button type="button" className="btn" disabled={busy} onClick={() => void run(() => api<ProviderRow>("DELETE", `${path}/key`))}>
            Remove key
          </button>
        ) : null}
      </form>
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void run(() => api<ProviderRow>("PUT", `${path}/base-url`, { baseUrl: baseUrl.trim() || null }));
        }}
      >
        <input
          className="input"
          placeholder="Base URL (default endpoint when empty)"
          aria-label={`${p.displayName} base URL`}
          value={baseUrl}
          onChange={(e) => setBaseUrl(e.target.value)}
        />
        <button type="submit" className="btn" disabled={busy || baseUrl.trim() === (p.baseUrl ?? "")}>
          Save URL
        </button>
      </form>
      <FormError message={error} />
    </div>
  );
}

function ProvidersSection(props: {
  rows: ProviderRow[] | null;
  /** Ids of the providers set up when the dialog opened: they are listed first. Rows do not
   *  move while the dialog is open (saving a key would otherwise make the row jump away). */
  setUp: ReadonlySet<string>;
  path: string;
  error: string | null;
  onChange: (row: ProviderRow) => void;
}) {
  const rows = props.rows ?? [];
  const first = rows.filter((r) => props.setUp.has(r.id)).sort((a, b) => Number(b.custom) - Number(a.custom));
  const rest = rows.filter((r) => !props.setUp.has(r.id));
  const noneUsable = props.rows !== null && !rows.some((r) => r.usable);
  return (
    <section className="settings-section" aria-label="Providers">
      <h3>Providers</h3>
      <p className="muted" style={{ marginTop: 0 }}>
        Keys are saved to <code>{props.path || "providers.jsonc"}</code> and are never shown again.
      </p>
      {props.error ? <div className="form-error">{props.error}</div> : null}
      {noneUsable ? (
        <p className="provider-start" data-testid="no-provider">
          No provider can be used yet. Paste an API key into one of the providers below and save it; the
          agent can answer as soon as one is usable.
        </p>
      ) : null}
      {first.map((r) => (
        <ProviderItem key={r.id} row={r} onChange={props.onChange} />
      ))}
      {rest.length > 0 ? (
        <details className="provider-more" open={noneUsable || first.length === 0}>
          <summary>
            {first.length > 0 ? "Other built-in providers" : "Built-in providers"}{" "}
            <span className="counter-nums">({rest.length})</span>
          </summary>
          {rest.map((r) => (
            <ProviderItem key={r.id} row={r} onChange={props.onChange} />
          ))}
        </details>
      ) : null}
    </section>
  );
}

function ModelsSection(props: { providers: ProviderRow[] | null; onProviderChange: (row: ProviderRow) => void }) {
  const models = useStore(app, (s) => s.models);
  return (
    <section className="settings-section" aria-label="Models">
      <h3>Models</h3>
      <DefaultModelPicker info={models} />
      {props.providers ? <CustomModels providers={props.providers} onProviderChange={props.onProviderChange} /> : null}
      <ModelFallbacks info={models} />
      <ModelsList info={models} />
    </section>
  );
}

function ModelsList(props: { info: ModelsInfo | null }) {
  if (!props.info) return <div className="muted">Loading…</div>;
  return (
    <>
      <div className="section-title">All models</div>
      {props.info.models.map((m) => (
        <div className="list-row" key={m.model}>
          <span className="grow">
            {m.displayName} <span className="faint">{m.model}</span>
          </span>
          {m.contextWindow ? <span className="faint counter-nums">{Math.round(m.contextWindow / 1000)}k</span> : null}
          <span className={`badge ${m.usable ? "ok" : ""}`}>{m.usable ? "usable" : "no key"}</span>
        </div>
      ))}
    </>
  );
}

function SecretsSection(props: { projects: Project[] }) {
  const [project, setProject] = useState(props.projects[0]?.path ?? "");
  const [names, setNames] = useState<string[] | null>(null);
  const [unavailable, setUnavailable] = useState(false);
  const [name, setName] = useState("");
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!project) return;
    setNames(null);
    api<{ names: string[] }>("GET", `/api/projects/secrets${qs({ path: project })}`)
      .then((d) => {
        setNames(d.names);
        setUnavailable(false);
      })
      .catch((exc: unknown) => {
        if (exc instanceof ApiError && exc.status === 404) setUnavailable(true);
        else setError(errorMessage(exc));
      });
  }, [project]);
  const save = async () => {
    setError(null);
    try {
      const d = await api<{ names: string[] }>("PUT", "/api/projects/secrets", { path: project, name: name.trim(), value });
      setNames(d.names);
      setName("");
      setValue("");
    } catch (exc) {
      setError(errorMessage(exc));
    }
  };
  const remove = async (n: string) => {
    try {
      const d = await api<{ names: string[] }>("DELETE", `/api/projects/secrets${qs({ path: project, name: n })}`);
      setNames(d.names);
    } catch (exc) {
      setError(errorMessage(exc));
    }
  };
  if (unavailable) return null;
  return (
    <section className="settings-section">
      <h3>Project secrets</h3>
      {props.projects.length === 0 ? <div className="muted">Add a project first.</div> : null}
      {props.projects.length > 0 ? (
        <>
          <ProjectSelect projects={props.projects} value={project} onChange={setProject} label="Secrets project" />
          {names?.map((n) => (
            <div className="list-row" key={n}>
              <code className="grow">{n}</code>
              <span className="faint">set</span>
              <button type="button" className="btn" onClick={() => void remove(n)}>
                Remove
              </button>
            </div>
          ))}
          {names?.length === 0 ? <div className="muted">No secrets.</div> : null}
          <form
            className="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              if (name.trim()) void save();
            }}
          >
            <input className="input" placeholder="NAME" aria-label="Secret name" value={name} onChange={(e) => setName(e.target.value)} />
            <input className="input" type="password" autoComplete="off" placeholder="value" aria-label="Secret value" value={value} onChange={(e) => setValue(e.target.value)} />
            <button type="submit" className="btn" disabled={!name.trim()}>
              Save
            </button>
          </form>
        </>
      ) : null}
      {error ? <div className="form-error">{error}</div> : null}
    </section>
  );
}

function TrustSection(props: { projects: Project[] }) {
  const [error, setError] = useState<string | null>(null);
  const toggle = async (p: Project) => {
    setError(null);
    try {
      await api<Project>("POST", "/api/projects/trust", { path: p.path, trusted: !p.trusted });
      await loadWorkspaces();
    } catch (exc) {
      setError(errorMessage(exc));
    }
  };
  return (
    <section className="settings-section">
      <h3>Trust</h3>
      <p className="muted" style={{ marginTop: 0 }}>
        Repository automation (hooks, project MCP servers, tool environment) runs only in trusted projects.
      </p>
      {props.projects.map((p) => (
        <label className="list-row" key={p.path}>
          <input type="checkbox" checked={p.trusted} onChange={() => void toggle(p)} aria-label={`Trust ${p.name}`} />
          <span className="grow">
            {p.name} <span className="faint">{p.path}</span>
          </span>
        </label>
      ))}
      {error ? <div className="form-error">{error}</div> : null}
    </section>
  );
}

function SessionsSection() {
  const [sessions, setSessions] = useState<ServerSession[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () => {
    api<{ sessions: ServerSession[] }>("GET", "/api/auth/sessions")
      .then((d) => setSessions(d.sessions))
      .catch((exc: unknown) => setError(errorMessage(exc)));
  };
  useEffect(load, []);
  const revoke = async (id: string) => {
    try {
      await api("DELETE", `/api/auth/sessions/${encodeURIComponent(id)}`);
      load();
    } catch (exc) {
      setError(errorMessage(exc));
    }
  };
  return (
    <section className="settings-section">
      <h3>Browser sessions</h3>
      {sessions?.map((s) => (
        <div className="list-row" key={s.id}>
          <span className="grow">
            {s.userAgent ?? "unknown browser"}
            {s.current ? <span className="badge ok" style={{ marginLeft: 6 }}>this browser</span> : null}
          </span>
          {!s.current ? (
            <button type="button" className="btn" onClick={() => void revoke(s.id)}>
              Revoke
            </button>
          ) : null}
        </div>
      ))}
      {sessions?.length === 0 ? <div className="muted">Authentication is off (--no-auth).</div> : null}
      <div className="inline-form">
        <button type="button" className="btn" onClick={() => void api("POST", "/api/auth/sessions/revoke-others").then(load)}>
          Revoke all others
        </button>
        <button type="button" className="btn" onClick={() => void signOut()}>
          Sign out
        </button>
      </div>
      {error ? <div className="form-error">{error}</div> : null}
    </section>
  );
}

export function SettingsDialog() {
  const projects = useStore(app, (s) => s.projects);
  const [rows, setRows] = useState<ProviderRow[] | null>(null);
  const [setUp, setSetUp] = useState<ReadonlySet<string>>(new Set());
  const [path, setPath] = useState("");
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<{ providers: ProviderRow[]; path: string }>("GET", "/api/settings/providers")
      .then((d) => {
        setRows(d.providers);
        setSetUp(new Set(d.providers.filter(isSetUp).map((p) => p.id)));
        setPath(d.path);
      })
      .catch((exc: unknown) => setError(errorMessage(exc)));
  }, []);
  const onChange = (row: ProviderRow) => setRows((all) => all?.map((x) => (x.id === row.id ? row : x)) ?? null);
  return (
    <Modal title="Settings" onClose={closeDialog} wide>
      <ProvidersSection rows={rows} setUp={setUp} path={path} error={error} onChange={onChange} />
      <ModelsSection providers={rows} onProviderChange={onChange} />
      <McpSettingsSection projects={projects} />
      <SecretsSection projects={projects} />
      <TrustSection projects={projects} />
      <SafetySection />
      <ExternalAgentsSection />
      <SessionsSection />
    </Modal>
  );
}
