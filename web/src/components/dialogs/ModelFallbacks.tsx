// Settings → Models → Model Fallbacks: config.json `modelFallbacks` (docs/models.md). When a
// model refuses, the turn retries on the next model of its chain; the server checks the chains
// with the sessions' own parser before it writes them.

import { useEffect, useId, useState } from "react";
import { api, errorMessage } from "../../api/http";
import type { FallbackSettings, ModelsInfo } from "../../api/types";
import { type ChainRow, toChains, toRows } from "../../lib/fallbacks";
import { FormError } from "../FormParts";

const URL = "/api/settings/model-fallbacks";

export function ModelFallbacks(props: { info: ModelsInfo | null }) {
  const [data, setData] = useState<FallbackSettings | null>(null);
  const [rows, setRows] = useState<ChainRow[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const listId = useId();

  const show = (d: FallbackSettings) => {
    setData(d);
    setRows(toRows(d.chains));
  };
  useEffect(() => {
    api<FallbackSettings>("GET", URL)
      .then(show)
      .catch((exc: unknown) => setError(errorMessage(exc)));
  }, []);

  const put = async (chains: ReturnType<typeof toChains> | null) => {
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      show(await api<FallbackSettings>("PUT", URL, { chains }));
      setSaved(true);
    } catch (exc) {
      setError(errorMessage(exc));
    } finally {
      setBusy(false);
    }
  };
  const edit = (index: number, patch: Partial<ChainRow>) =>
    setRows(rows.map((r, i) => (i === index ? { ...r, ...patch } : r)));

  return (
    <div data-testid="model-fallbacks" style={{ marginBottom: 10 }}>
      <div className="section-title">Model Fallbacks</div>
      <div className="faint">
        When a model refuses, the turn retries on the next model of its chain (never for quota, key or network errors).
        {data?.builtIn ? " These are the built-in chains; saving makes them yours." : ""}
      </div>
      {data?.error ? <FormError message={`config.json: ${data.error}`} /> : null}
      <datalist id={listId}>
        {(props.info?.models ?? []).map((m) => (
          <option key={m.model} value={m.model} />
        ))}
      </datalist>
      {rows.map((row, i) => (
        <div className="list-row" key={i} data-chain={row.model}>
          <input
            className="input"
            style={{ flex: 1, minWidth: 0 }}
            aria-label="Model that refuses"
            placeholder="provider:model"
            list={listId}
            value={row.model}
            onChange={(e) => edit(i, { model: e.target.value })}
          />
          <span className="faint" style={{ whiteSpace: "nowrap" }}>
            falls back to
          </span>
          <input
            className="input"
            style={{ flex: 1, minWidth: 0 }}
            aria-label="Fallback models"
            placeholder="provider:model, ..."
            list={listId}
            value={row.fallbacks}
            onChange={(e) => edit(i, { fallbacks: e.target.value })}
          />
          <button type="button" className="btn" onClick={() => setRows(rows.filter((_, j) => j !== i))}>
            Remove
          </button>
        </div>
      ))}
      <div className="inline-form">
        <button type="button" className="btn" onClick={() => setRows([...rows, { model: "", fallbacks: "" }])}>
          Add chain
        </button>
        <button type="button" className="btn primary" disabled={busy || !data} onClick={() => void put(toChains(rows))}>
          Save chains
        </button>
        <button type="button" className="btn" disabled={busy || !data || data.builtIn} onClick={() => void put(null)}>
          Use built-in chains
        </button>
        {saved ? <span className="muted">Saved; applies from the next refusal.</span> : null}
      </div>
      <FormError message={error} />
    </div>
  );
}
