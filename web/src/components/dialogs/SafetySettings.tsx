// Settings → Safety (docs/security.md): the command sandbox, the read denylist, and the approval
// rules the user chose to remember. Everything is stored in the user's own config.json by the
// server, which checks it with the same parsers the sessions use.

import { useEffect, useState } from "react";
import { api, errorMessage } from "../../api/http";
import type { SafetySettings } from "../../api/types";
import { FormError } from "../FormParts";

const MODES: SafetySettings["sandbox"]["mode"][] = ["auto", "workspace-write", "read-only", "off"];

function lines(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
}

export function SafetySection() {
  const [data, setData] = useState<SafetySettings | null>(null);
  const [writable, setWritable] = useState("");
  const [denied, setDenied] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);

  const show = (d: SafetySettings) => {
    setData(d);
    setWritable(d.sandbox.writable.join("\n"));
    setDenied(d.readDenylist.paths.join("\n"));
  };
  useEffect(() => {
    api<SafetySettings>("GET", "/api/settings/safety")
      .then(show)
      .catch((exc: unknown) => setError(errorMessage(exc)));
  }, []);

  const save = async (next: SafetySettings) => {
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      show(
        await api<SafetySettings>("PUT", "/api/settings/safety", {
          sandbox: { ...next.sandbox, writable: lines(writable) },
          readDenylist: { ...next.readDenylist, paths: lines(denied) },
        }),
      );
      setSaved(true);
    } catch (exc) {
      setError(errorMessage(exc));
    } finally {
      setBusy(false);
    }
  };
  const forget = async (project: string, prefix: string) => {
    try {
      show(await api<SafetySettings>("POST", "/api/settings/safety/rules/forget", { project, prefix }));
    } catch (exc) {
      setError(errorMessage(exc));
    }
  };

  if (!data) {
    return (
      <section className="settings-section">
        <h3>Safety</h3>
        {error ? <div className="form-error">{error}</div> : <div className="muted">Loading…</div>}
      </section>
    );
  }
  const sandbox = data.sandbox;
  const set = (patch: Partial<SafetySettings["sandbox"]>) => setData({ ...data, sandbox: { ...sandbox, ...patch } });
  return (
    <section className="settings-section" data-testid="safety-settings">
      <h3>Safety</h3>
      <p className="muted" style={{ marginTop: 0 }} data-testid="sandbox-backend">
        Commands run {data.backend.effective === "off" ? "without a sandbox" : `in the ${data.backend.effective} sandbox`}
        {data.backend.effective === "refused" ? " (refused: no working sandbox)" : ""}. {data.backend.detail}
      </p>
      <div className="form-grid">
        <label>
          Sandbox
          <select className="input" aria-label="Sandbox mode" value={sandbox.mode} onChange={(e) => set({ mode: e.target.value as SafetySettings["sandbox"]["mode"] })}>
            {MODES.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>
        <label>
          Network for commands
          <select className="input" aria-label="Egress" value={sandbox.egress} onChange={(e) => set({ egress: e.target.value === "off" ? "off" : "shared" })}>
            <option value="shared">shared</option>
            <option value="off">off (loopback only)</option>
          </select>
        </label>
        <label className="list-row">
          <input type="checkbox" checked={sandbox.privateTmp} onChange={(e) => set({ privateTmp: e.target.checked })} aria-label="Private /tmp" />
          <span className="grow">A private /tmp for each session</span>
        </label>
        <label>
          Writable folders (one per line)
          <textarea className="input" aria-label="Writable folders" rows={2} value={writable} onChange={(e) => setWritable(e.target.value)} />
        </label>
        <label className="list-row">
          <input
            type="checkbox"
            checked={data.readDenylist.sensitive}
            onChange={(e) => setData({ ...data, readDenylist: { ...data.readDenylist, sensitive: e.target.checked } })}
            aria-label="Hide sensitive files"
          />
          <span className="grow">Hide sensitive files (.env, *.pem, *.key, ~/.ssh, ~/.aws, ~/.gnupg)</span>
        </label>
        <label>
          Also hide (one path per line)
          <textarea className="input" aria-label="Denied paths" rows={2} value={denied} onChange={(e) => setDenied(e.target.value)} />
        </label>
      </div>
      <div className="inline-form">
        <button type="button" className="btn primary" disabled={busy} onClick={() => void save(data)}>
          Save safety settings
        </button>
        {saved ? <span className="muted">Saved; applies from the next command.</span> : null}
      </div>
      <h4>Always allowed commands and requests</h4>
      {data.rules.length === 0 ? <div className="muted">None yet: “Always allow” on an approval adds one.</div> : null}
      {data.rules.map((r) => (
        <div className="list-row" key={`${r.project}\u0000${r.prefix}`} data-rule={r.prefix}>
          <span className="grow">
            <code>{r.prefix}</code> <span className="faint">{r.project}</span>
          </span>
          <button type="button" className="btn" onClick={() => void forget(r.project, r.prefix)}>
            Remove
          </button>
        </div>
      ))}
      <FormError message={error} />
    </section>
  );
}
