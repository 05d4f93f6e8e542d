// Settings → Models: the default model (config.json `defaultModel`) and custom models, the ids
// in each provider's `models` in providers.jsonc. The Model ID field suggests ids from the
// provider's own model list; a suggestion is only added when it is picked (a click, or the
// arrow keys and Enter). Add, or Enter with nothing highlighted, adds what was typed.

import { useId, useState } from "react";
import { api, errorMessage, qs } from "../../api/http";
import type { CatalogList, ModelEdit, ModelsInfo, ProviderRow } from "../../api/types";
import { chosenId, filterSuggestions, modelIdProblem, stepActive } from "../../lib/customModels";
import { app, loadModels } from "../../state/app";
import { FormError } from "../FormParts";

type Catalog = { state: "loading" } | { state: "ok"; data: CatalogList } | { state: "error"; message: string };

export function DefaultModelPicker(props: { info: ModelsInfo | null }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const info = props.info;
  if (!info) return <div className="muted">Loading…</div>;
  const configured = info.configuredDefaultModel ?? null;
  const automatic = configured === null && info.defaultModel ? `Automatic (now ${info.defaultModel})` : "Automatic";
  const known = configured === null || info.models.some((m) => m.model === configured);
  const change = async (value: string) => {
    setBusy(true);
    setError(null);
    try {
      const next = await api<ModelsInfo>("PUT", "/api/settings/default-model", { model: value || null });
      app.update({ models: next });
    } catch (exc) {
      setError(errorMessage(exc));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div style={{ marginBottom: 10 }}>
      <label className="field">
        <span>Default model</span>
        <select className="input" value={configured ?? ""} disabled={busy} onChange={(e) => void change(e.target.value)}>
          <option value="">{automatic}</option>
          {known ? null : <option value={configured}>{configured}</option>}
          {info.models.map((m) => (
            <option key={m.model} value={m.model}>
              {m.displayName === m.model ? m.model : `${m.displayName} (${m.model})`}
              {m.usable ? "" : ", no key"}
            </option>
          ))}
        </select>
      </label>
      <div className="faint">
        Used by <code>xum run</code> and by workspaces without a model of their own.
      </div>
      <FormError message={error} />
    </div>
  );
}

export function CustomModels(props: { providers: ProviderRow[]; onProviderChange: (row: ProviderRow) => void }) {
  const first = props.providers.find((p) => p.usable) ?? props.providers[0];
  const [provider, setProvider] = useState(first?.id ?? "");
  const [text, setText] = useState("");
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const [catalogs, setCatalogs] = useState<Record<string, Catalog>>({});
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const listId = useId();
  const row = props.providers.find((p) => p.id === provider);
  const catalog = catalogs[provider];
  const candidates = catalog?.state === "ok" ? filterSuggestions(catalog.data.models, text, row?.models ?? []) : [];
  const shown = open ? candidates : [];
  const highlighted = active >= 0 && active < shown.length ? active : -1;
  const base = (id: string) => `/api/settings/providers/${encodeURIComponent(id)}`;

  // Opening the field asks for the provider's catalog (again after a failure).
  const openList = (id: string = provider) => {
    setOpen(true);
    const current = catalogs[id];
    if (!id || (current && current.state !== "error")) return;
    setCatalogs((c) => ({ ...c, [id]: { state: "loading" } }));
    api<CatalogList>("GET", `${base(id)}/catalog`)
      .then((data) =>
        setCatalogs((c) => ({ ...c, [id]: data.error ? { state: "error", message: data.error } : { state: "ok", data } })),
      )
      .catch((exc: unknown) => setCatalogs((c) => ({ ...c, [id]: { state: "error", message: errorMessage(exc) } })));
  };

  const add = async (raw: string) => {
    const id = raw.trim();
    setNote(null);
    const problem = modelIdProblem(id);
    if (problem) {
      setError(problem);
      return;
    }
    setError(null);
    setBusy(true);
    try {
      const res = await api<ModelEdit>("POST", `${base(provider)}/models`, { id });
      props.onProviderChange(res.provider);
      setNote(res.message ?? `Added ${provider}:${id}.`);
      setText("");
      setActive(-1);
      setOpen(false);
      void loadModels();
    } catch (exc) {
      setError(errorMessage(exc));
    } finally {
      setBusy(false);
    }
  };

  const remove = async (providerId: string, id: string) => {
    setNote(null);
    setError(null);
    try {
      const res = await api<ModelEdit>("DELETE", `${base(providerId)}/models${qs({ id })}`);
      props.onProviderChange(res.provider);
      setNote(`Removed ${providerId}:${id}.`);
      void loadModels();
    } catch (exc) {
      setError(errorMessage(exc));
    }
  };

  const onKeyDown = (e: React.KeyboardEvent<HTMLInputElement>) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (!open) openList();
      setActive(stepActive(highlighted, e.key === "ArrowDown" ? 1 : -1, candidates.length));
    } else if (e.key === "Enter") {
      e.preventDefault();
      if (!busy) void add(chosenId(highlighted, shown, text));
    } else if (e.key === "Escape" && open) {
      // The list closes first; a second Escape closes the dialog.
      e.preventDefault();
      e.stopPropagation();
      setOpen(false);
      setActive(-1);
    }
  };

  const withModels = props.providers.filter((p) => p.models.length > 0);
  return (
    <div data-testid="custom-models">
      <div className="section-title">Custom models</div>
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (!busy) void add(chosenId(highlighted, shown, text));
        }}
      >
        <select
          className="input"
          style={{ flex: "0 0 auto", width: "auto", minWidth: 160 }}
          aria-label="Provider"
          value={provider}
          onChange={(e) => {
            setProvider(e.target.value);
            setActive(-1);
            setNote(null);
            setError(null);
          }}
        >
          {props.providers.map((p) => (
            <option key={p.id} value={p.id}>
              {p.displayName === p.id ? p.id : `${p.displayName} (${p.id})`}
            </option>
          ))}
        </select>
        <div style={{ position: "relative", flex: 1, minWidth: 200 }}>
          <input
            className="input"
            style={{ width: "100%" }}
            role="combobox"
            aria-label="Model ID"
            aria-autocomplete="list"
            aria-expanded={open}
            aria-controls={listId}
            aria-activedescendant={highlighted >= 0 ? `${listId}-${highlighted}` : undefined}
            autoComplete="off"
            spellCheck={false}
            placeholder="Model ID: search the catalog or type one"
            value={text}
            onFocus={() => openList()}
            onClick={() => (open ? undefined : openList())}
            onBlur={() => {
              setOpen(false);
              setActive(-1);
            }}
            onChange={(e) => {
              setText(e.target.value);
              setActive(-1);
              if (!open) openList();
            }}
            onKeyDown={onKeyDown}
          />
          {open ? (
            <div
              className="popover"
              style={{ top: "100%", bottom: "auto", marginTop: 4, marginBottom: 0, left: 0, right: 0, maxWidth: "none" }}
            >
              <CatalogStatus catalog={catalog} shown={shown.length} typed={text.trim()} />
              <div role="listbox" id={listId} aria-label="Suggestions">
                {shown.map((m, i) => (
                  <div
                    key={m.id}
                    id={`${listId}-${i}`}
                    role="option"
                    aria-selected={i === highlighted}
                    className={`menu-item ${i === highlighted ? "active" : ""}`}
                    data-suggestion={m.id}
                    onMouseDown={(e) => e.preventDefault()}
                    onMouseMove={() => i !== highlighted && setActive(i)}
                    onClick={() => void add(m.id)}
                  >
                    <span className="grow">
                      {m.id}
                      {m.displayName ? <span className="desc">{m.displayName}</span> : null}
                    </span>
                  </div>
                ))}
              </div>
            </div>
          ) : null}
        </div>
        <button
          type="submit"
          className="btn"
          disabled={busy || (!text.trim() && highlighted < 0)}
          onMouseDown={(e) => e.preventDefault()}
        >
          Add
        </button>
      </form>
      <FormError message={error} />
      {note ? (
        <div className="muted" role="status">
          {note}
        </div>
      ) : null}
      <div style={{ marginTop: 6 }}>
        {withModels.length === 0 ? <div className="muted">No custom models yet.</div> : null}
        {withModels.flatMap((p) =>
          p.models.map((id, i) => (
            <div className="list-row" key={`${p.id}:${i}:${id}`} data-custom-model={`${p.id}:${id}`}>
              <code className="grow">
                {p.id}:{id}
              </code>
              <button type="button" className="btn" aria-label={`Remove ${p.id}:${id}`} onClick={() => void remove(p.id, id)}>
                Remove
              </button>
            </div>
          )),
        )}
      </div>
    </div>
  );
}

function CatalogStatus(props: { catalog: Catalog | undefined; shown: number; typed: string }) {
  const c = props.catalog;
  if (!c || c.state === "loading") {
    return (
      <div className="menu-item faint" role="status">
        Loading suggestions… (you can type an ID meanwhile)
      </div>
    );
  }
  if (c.state === "error") {
    return (
      <div className="menu-item form-error" role="status" style={{ whiteSpace: "normal" }}>
        listing failed: {c.message}
      </div>
    );
  }
  if (props.shown === 0) {
    return (
      <div className="menu-item faint" role="status">
        {props.typed ? `No suggestion matches; Enter adds "${props.typed}".` : "No suggestions from this provider's catalog."}
      </div>
    );
  }
  return c.data.truncated ? (
    <div className="menu-item faint" role="status">
      The catalog was cut short; type to narrow it down.
    </div>
  ) : null;
}
