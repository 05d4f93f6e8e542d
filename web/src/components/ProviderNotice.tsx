// What a first run needs to hear: no model provider is usable yet, and Settings is where a key
// goes. Shown in the empty states until a provider is usable.

import { KeyRound } from "lucide-react";
import { useStore } from "../lib/store";
import { app, openDialog } from "../state/app";

/** True once the server's model list is in and no model in it has a usable provider. */
export function useNoProvider(): boolean {
  return useStore(app, (s) => s.models !== null && !s.models.models.some((m) => m.usable));
}

export function ProviderNotice() {
  const none = useNoProvider();
  if (!none) return null;
  return (
    <div className="provider-notice" data-testid="provider-notice">
      <p>
        <KeyRound size={14} aria-hidden style={{ verticalAlign: "-2px", marginRight: 6 }} />
        No model provider is set up yet, so the agent cannot answer. Add an API key in Settings (it is saved on
        the server's machine), or start the server with one in its environment, such as{" "}
        <code>ANTHROPIC_API_KEY</code>.
      </p>
      <button type="button" className="btn btn-primary" onClick={() => openDialog({ kind: "settings" })}>
        Open Settings
      </button>
    </div>
  );
}
