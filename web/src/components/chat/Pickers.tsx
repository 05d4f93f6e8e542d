// The composer's footer pickers: agent mode (Plan/Exec), model pill, thinking level.

import { Brain, ChevronDown } from "lucide-react";
import { useState } from "react";
import type { Workspace } from "../../api/types";
import { isMacPlatform, shortcutLabel } from "../../lib/keybinds";
import { effectiveThinking, modelLabel, resolveModel, thinkingLevels } from "../../lib/models";
import { useStore } from "../../lib/store";
import { app } from "../../state/app";
import { setAgent, setModel, setThinking } from "../../state/commands";
import { Menu } from "../Menu";
import { Tooltip } from "../Tooltip";

const mac = typeof navigator !== "undefined" && isMacPlatform(navigator.platform);

type Open = "none" | "model" | "thinking" | "agent";

const AGENTS = [
  { id: "exec", label: "Exec", description: "Make changes" },
  { id: "plan", label: "Plan", description: "Read, then propose a plan" },
];

export function ComposerPickers(props: { workspace: Workspace; onError: (m: string | null) => void }) {
  const ws = props.workspace;
  const models = useStore(app, (s) => s.models);
  const [open, setOpen] = useState<Open>("none");
  const close = () => setOpen("none");
  const levels = thinkingLevels(models, ws.model);
  const plan = ws.agent === "plan";
  const current = resolveModel(models, ws.model);
  const thinking = effectiveThinking(ws.thinking);

  return (
    <span style={{ position: "relative", display: "inline-flex", gap: 6, flexWrap: "wrap", minWidth: 0 }}>
      <Tooltip content={<>Agent mode <span className="kbd-hint">({shortcutLabel("TOGGLE_MODE", mac)})</span></>}>
        <button
          type="button"
          className={`pill ${plan ? "mode-plan" : "mode-exec"}`}
          aria-label={`Agent: ${plan ? "Plan" : "Exec"}`}
          onClick={() => setOpen(open === "agent" ? "none" : "agent")}
        >
          {plan ? "Plan" : "Exec"}
          <ChevronDown size={12} aria-hidden />
        </button>
      </Tooltip>
      <Tooltip content={<>Model <span className="kbd-hint">({shortcutLabel("CYCLE_MODEL", mac)} cycles)</span></>}>
        <button
          type="button"
          className="pill"
          aria-label={`Model: ${modelLabel(models, ws.model)}`}
          data-model={current ?? ""}
          onClick={() => setOpen(open === "model" ? "none" : "model")}
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
          onClick={() => setOpen(open === "thinking" ? "none" : "thinking")}
        >
          <Brain size={12} aria-hidden />
          {thinking}
        </button>
      </Tooltip>
      {open === "agent" ? (
        <Menu
          label="Agent"
          onClose={close}
          items={AGENTS.map((a) => ({ ...a, active: a.id === ws.agent }))}
          onSelect={(id) => {
            close();
            void setAgent(id);
          }}
        />
      ) : null}
      {open === "model" ? (
        <Menu
          label="Models"
          filterable
          filter={(item, q) => item.id.toLowerCase().includes(q.toLowerCase()) || String(item.label).toLowerCase().includes(q.toLowerCase())}
          onClose={close}
          items={(models?.models ?? []).map((m) => ({
            id: m.model,
            label: m.displayName,
            description: m.usable ? m.model : `${m.model} (no credential)`,
            active: m.model === current,
          }))}
          onSelect={(id) => {
            close();
            void setModel(id).catch((x: unknown) => props.onError(String(x)));
          }}
        />
      ) : null}
      {open === "thinking" ? (
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
