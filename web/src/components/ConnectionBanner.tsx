// The lost-server notice where the user looks: over the chat at every width (the sidebar footer's
// "reconnecting…" is hidden in a drawer on phones). While it shows, statuses on the page are the
// last ones the server sent, so the header says "offline" instead of "working".

import { CloudOff } from "lucide-react";
import { useStore } from "../lib/store";
import { app, retryConnection } from "../state/app";

/** The socket was open and is not now: the server stopped, restarted, or the network dropped. */
export function useOffline(): boolean {
  return useStore(app, (s) => s.everConnected && s.connection !== "open");
}

export function ConnectionBanner() {
  const offline = useOffline();
  const connecting = useStore(app, (s) => s.connection === "connecting");
  if (!offline) return null;
  return (
    <div className="connection-banner" role="status" data-testid="connection-banner">
      <CloudOff size={15} aria-hidden />
      <span className="grow">
        The xum server cannot be reached. {connecting ? "Connecting…" : "Reconnecting shortly."} What you type is
        kept; statuses may be out of date until it is back.
      </span>
      <button type="button" className="btn" onClick={retryConnection} disabled={connecting}>
        Retry now
      </button>
    </div>
  );
}
