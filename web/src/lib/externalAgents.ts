// External ACP agents in the browser (docs/api.md, "External agents"): the new-workspace
// dialog's "Agent" choice (with any runtime: every one runs an external agent), the label a
// workspace shows, and which composer pickers apply. An external agent picks its own model and
// runs its own loop, so xum's model, thinking and agent pickers do not apply to its workspace.

import type { Workspace } from "../api/types";

/** One configured external agent as `GET /api/external-agents` lists it. */
export interface ExternalAgentInfo {
  name: string;
  label: string;
  models: string[];
}

/** The dialog's "Agent" choices: xum's own (value "") first, then each configured agent by its
 *  label. None configured: no choices, and the dialog shows no "Agent" field. */
export function agentChoices(agents: ExternalAgentInfo[] | null): { value: string; label: string }[] {
  if (!agents || agents.length === 0) return [];
  return [{ value: "", label: "xum" }, ...agents.map((a) => ({ value: a.name, label: a.label || a.name }))];
}

/** The create request's field for the chosen agent (nothing for xum's own). */
export function createFields(chosen: string): { externalAgent?: string } {
  return chosen ? { externalAgent: chosen } : {};
}

/** The label of a workspace's external agent (its configured label, else its name); null for
 *  a workspace of xum's own engine. */
export function externalLabel(ws: Pick<Workspace, "externalAgent">, agents: ExternalAgentInfo[] | null): string | null {
  const name = ws.externalAgent;
  if (!name) return null;
  const found = agents?.find((a) => a.name === name);
  return found?.label || name;
}

/** Whether xum's model, thinking and agent settings apply to the workspace. */
export function engineSettingsApply(ws: Pick<Workspace, "externalAgent"> | null | undefined): boolean {
  return !ws?.externalAgent;
}
