// The configured external agents (`GET /api/external-agents`), read when the app starts and
// again when the new-workspace dialog opens (config.json may have changed). Null until read;
// a failed read leaves the last list.

import { api } from "../api/http";
import type { ExternalAgentInfo } from "../lib/externalAgents";
import { Store } from "../lib/store";

export const externalAgents = new Store<ExternalAgentInfo[] | null>(null);

export async function loadExternalAgents(): Promise<void> {
  try {
    const found = await api<{ agents: ExternalAgentInfo[] }>("GET", "/api/external-agents");
    externalAgents.set(found.agents);
  } catch {
    // No list (an older server, a broken config entry): no external agent choice.
  }
}
