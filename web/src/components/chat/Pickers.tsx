// The composer's footer pickers: the agent (the workspace's selectable agents, Plan/Exec among
// them), the model pill and the thinking level. Which menu is open lives in the app state, so
// keybinds (Ctrl+Shift+A) and `/model` can open one.

import { Brain, ChevronDown, Shield } from "lucide-react";
import { useEffect } from "react";
import type { PermissionMode, Workspace } from "../../api/types";
import { engineSettingsApply } from "../../lib/externalAgents";
import { isMacPlatform, shortcutLabel } from "../../lib/keybinds";
import { effectiveThinking, entryLabel, modelLabel, resolveModel, thinkingLevels } from "../../lib/models";
import { useStore } from "../../lib/store";
import { app, loadAgents, openPicker, type Picker } from "../../state/app";
import { agentChoices, setAgent, setModel, setPermissions, setThinking } from "../../state/commands";
import { Menu } from "../Menu";
import { Tooltip } from "../Tooltip";

const mac = typeof navigator !== "undefined" && isMacPlatform(navigator.platform);

/** An agent's `ui.color`, only when it is a plain colour (it comes from a repository file). */
export function safeColor(color: string | null | undefined): string | undefined {
  if (!color) return undefined;
  return /^(#[0-9a-f]{3,8}|[a-z]{3,20})$/i.test(color.trim()) ? color.trim() : undefined;
}

const PERMISSIONS: { id: PermissionMode; label: string; description: string }[] = [
  { id: "auto", label: "Auto", description: "Commands run in the sandbox; critical ones and escalations ask" },
  { id: "ask", label: "Ask", description: "Also asks for commands outside the allowlist and edits outside the workspace" },
  { id: "read-only", label: "Read-only", description: "No file changes; commands only in the read-only sandbox" },
];

function agentLabel(id: string, name: string | undefined): string {
  if (name) return name;
  return id.charAt(0).toUpperCase() + id.slice(1);
}

export function ComposerPickers(props: { workspace: Workspace; onError: (m: string | null) => void }) {
  const ws = props.workspace;
  const models = useStore(app, (s) => s.models);
  const agents = useStore(app, (s) => s.agents);
  const open = useStore(app, (s) => s.picker);
  const setOpen = (p: Picker | null) => openPicker(open === p ? null : p);
  const close = () => openPicker(null);
  const levels = thinkingLevels(models, ws.model);
  const plan = ws.agent === "plan";
  const current = resolveModel(models, ws.model);
  const thinking = effectiveThinking(ws.thinking);
  const choices = agentChoices(agents);
  const agent = choices.find((a) => a.id === ws.agent);
  const color = safeColor(agent?.color);

  // An external agent picks its own model and runs its own loop: only the permission mode
  // applies (it answers the agent's permission requests).
  const engine = engineSettingsApply(ws);

  // The agent files may have changed since the list was read: read it again when opened.
  useEffect(() => {
    if (open === "agent") void loadAgents();
  }, [open]);

  return (
    <span className="composer-pickers">
      {engine ? (
        <>
          <Tooltip
            content={
              <>
                Agent{" "}
                <span className="kbd-hint">
                  ({shortcutLabel("OPEN_AGENT_PICKER", mac)}; {shortcutLabel("CYCLE_AGENT", mac)} cycles;{" "}
                  {shortcutLabel("TOGGLE_MODE", mac)} Plan/Exec)
                </span>
              </>
            }
          >
            <button
              type="button"
              className={`pill ${plan ? "mode-plan" : "mode-exec"}`}
              aria-label={`Agent: ${agentLabel(ws.agent, agent?.name)}`}
              data-agent={ws.agent}
              onClick={() => setOpen("agent")}
            >
              {color ? <span className="agent-dot" style={{ background: color }} aria-hidden /> : null}
              {agentLabel(ws.agent, agent?.name)}
              <ChevronDown size={12} aria-hidden />
            </button>
          </Tooltip>
          <Tooltip content={<>Model <span className="kbd-hint">({shortcutLabel("CYCLE_MODEL", mac)} cycles)</span></>}>
            <button
              type="button"
              className="pill"
              aria-label={`Model: ${modelLabel(models, ws.model)}`}
              data-model={current ?? ""}
              onClick={() => setOpen("model")}
            >
              {modelLabel(models, ws.model)}
              <ChevronDown size={12} aria-hidden />
            </button>
          </Tooltip>
          <Tooltip
            content={
              <>
                Thinking{" "}
                <span className="kbd-hint">
                  ({shortcutLabel("THINKING_UP", mac)} / {shortcutLabel("THINKING_DOWN", mac)})
                </span>
              </>
            }
          >
            <button
              type="button"
              className="pill"
              aria-label={`Thinking: ${thinking}`}
              data-thinking={thinking}
              onClick={() => setOpen("thinking")}
            >
              <Brain size={12} aria-hidden />
              {thinking}
            </button>
          </Tooltip>
        </>
      ) : null}
      <Tooltip content="Permissions: what waits for your approval">
        <button
          type="button"
          className={`pill perm-${ws.permissions ?? "auto"}`}
          aria-label={`Permissions: ${ws.permissions ?? "auto"}`}
          data-permissions={ws.permissions ?? "auto"}
          onClick={() => setOpen("permissions")}
        >
          <Shield size={12} aria-hidden />
          {PERMISSIONS.find((p) => p.id === (ws.permissions ?? "auto"))?.label ?? "Auto"}
        </button>
      </Tooltip>
      {open === "permissions" ? (
        <Menu
          label="Permissions"
          onClose={close}
          items={PERMISSIONS.map((p) => ({ id: p.id, label: p.label, description: p.description, active: p.id === (ws.permissions ?? "auto") }))}
          onSelect={(id) => {
            close();
            void setPermissions(id as PermissionMode);
          }}
        />
      ) : null}
      {engine && open === "agent" ? (
        <Menu
          label="Agent"
          onClose={close}
          items={choices.map((a) => {
            const dot = safeColor(a.color);
            return {
              id: a.id,
              label: (
                <>
                  {dot ? <span className="agent-dot" style={{ background: dot }} aria-hidden /> : null}
                  {agentLabel(a.id, a.name)}
                </>
              ),
              description: a.description || a.id,
              active: a.id === ws.agent,
            };
          })}
          onSelect={(id) => {
            close();
            void setAgent(id);
          }}
        />
      ) : null}
      {engine && open === "model" ? (
        <Menu
          label="Models"
          filterable
          filter={(item, q) => item.id.toLowerCase().includes(q.toLowerCase()) || String(item.label).toLowerCase().includes(q.toLowerCase())}
          onClose={close}
          items={(models?.models ?? []).map((m) => ({
            id: m.model,
            label: entryLabel(models, m),
            description: m.usable ? m.model : `${m.model} (no credential)`,
            active: m.model === current,
          }))}
          onSelect={(id) => {
            close();
            void setModel(id).catch((x: unknown) => props.onError(String(x)));
          }}
        />
      ) : null}
      {engine && open === "thinking" ? (
        <Menu
          label="Thinking level"
          onClose={close}
          items={levels.map((l) => ({ id: l, label: l, active: l === thinking }))}
          onSelect={(id) => {
            close();
            void setThinking(id);
          }}
        />
      ) : null}
    </span>
  );
}
