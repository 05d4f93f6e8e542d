// Settings → External agents (docs/external-agents.md): the other vendors' ACP agents that
// config.json's `externalAgents` defines, shown read-only (they are edited in that file). The
// server never sends what a definition's `env` holds, only the variables' names.

import { useEffect, useState } from "react";
import { api, errorMessage } from "../../api/http";
import type { ExternalAgentSettings } from "../../api/types";

export function ExternalAgentsSection() {
  const [data, setData] = useState<ExternalAgentSettings | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<ExternalAgentSettings>("GET", "/api/settings/external-agents")
      .then(setData)
      .catch((exc: unknown) => setError(errorMessage(exc)));
  }, []);
  return (
    <section className="settings-section" aria-label="External agents">
      <h3>External agents</h3>
      <p className="muted" style={{ marginTop: 0 }}>
        Other vendors’ coding agents a workspace can run instead of xum’s own (the Agent choice of the new-workspace
        dialog). They are defined under <code>externalAgents</code> in{" "}
        <code>{data?.configFile ?? "config.json"}</code>; edit that file to add or change one.
      </p>
      {error ? <div className="form-error">{error}</div> : null}
      {data?.problem ? <div className="form-error">{data.problem}</div> : null}
      {data && !data.problem && data.agents.length === 0 ? <div className="muted">None defined.</div> : null}
      {data?.agents.map((a) => (
        <div className="list-row" key={a.name} data-external-agent={a.name}>
          <span className="grow">
            <strong>{a.label}</strong> <span className="faint">({a.name})</span>
            <br />
            <span className="muted">command</span> <code data-testid="command">{a.command}</code>
            {a.models.length > 0 ? (
              <>
                {" "}
                <span className="muted">models</span> <span data-testid="models">{a.models.join(", ")}</span>
              </>
            ) : null}
            {a.envNames.length > 0 ? (
              <>
                {" "}
                <span className="muted">sets</span> <span data-testid="env-names">{a.envNames.join(", ")}</span>
              </>
            ) : null}
          </span>
        </div>
      ))}
    </section>
  );
}
