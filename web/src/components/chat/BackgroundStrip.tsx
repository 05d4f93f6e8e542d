// The background processes strip above the composer (docs/web-ui.md): one line while collapsed
// ("2 background processes running"), and when expanded (Alt+J, or Ctrl+Shift+J where the browser
// passes it; the same again or Esc collapses it) a row per process: its name, command, status,
// since when, its last lines once opened, and Stop. On a focused row, Down/Up move, Enter opens
// its output and Backspace stops it. Every string here comes from the agent or the process:
// rendered as text only.

import { ChevronDown, ChevronRight, Square, TerminalSquare } from "lucide-react";
import { useEffect, useRef, useState } from "react";
import { errorMessage } from "../../api/http";
import type { BackgroundProcessRow } from "../../api/types";
import { useStore } from "../../lib/store";
import { background, processesOf, refreshBackground, stopBackground, stripOpen } from "../../state/background";
import { focusComposer } from "./composerBus";

/** While it is open, the last lines are asked for this often (they change without events). */
const REFRESH_MS = 2000;

let focusRequest = 0;
const focusListeners = new Set<() => void>();

/** Expand the strip and put the keyboard on it, or collapse it (the shortcut). */
export function toggleStrip(): void {
  if (stripOpen.get()) {
    stripOpen.set(false);
    focusComposer();
    return;
  }
  stripOpen.set(true);
  focusRequest += 1;
  for (const listener of focusListeners) listener();
}

function since(ms: number): string {
  const d = new Date(ms);
  return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

function running(p: BackgroundProcessRow): boolean {
  return p.status === "running";
}

export function BackgroundStrip(props: { workspaceId: string }) {
  const id = props.workspaceId;
  const rows = useStore(background, (all) => processesOf(all, id));
  const open = useStore(stripOpen, (o) => o);
  const [selected, setSelected] = useState(0);
  const [opened, setOpened] = useState<ReadonlySet<string>>(new Set());
  const [error, setError] = useState<string | null>(null);
  const listRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    void refreshBackground(id);
  }, [id]);

  useEffect(() => {
    if (!open) return undefined;
    void refreshBackground(id);
    const timer = window.setInterval(() => void refreshBackground(id), REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [id, open]);

  // Newest first: what was just started is what the user looks for.
  const shown = [...rows].reverse();
  const count = shown.length;
  const active = shown.filter(running).length;

  useEffect(() => {
    const focus = () => {
      requestAnimationFrame(() => {
        const row = listRef.current?.querySelector<HTMLElement>(`[data-index="${Math.min(selected, Math.max(count - 1, 0))}"]`);
        (row ?? listRef.current)?.focus();
      });
    };
    focusListeners.add(focus);
    if (open && focusRequest > 0) focus();
    return () => {
      focusListeners.delete(focus);
    };
    // Only a new request (or the strip appearing) moves the focus.
  }, [open, count]);

  if (count === 0) return null;

  const stop = async (p: BackgroundProcessRow) => {
    setError(null);
    try {
      await stopBackground(id, p.process_id);
    } catch (exc) {
      setError(errorMessage(exc));
    }
  };
  const toggleOutput = (p: BackgroundProcessRow) => {
    setOpened((prev) => {
      const next = new Set(prev);
      if (next.has(p.process_id)) next.delete(p.process_id);
      else next.add(p.process_id);
      return next;
    });
  };
  const move = (to: number) => {
    const index = Math.max(0, Math.min(count - 1, to));
    setSelected(index);
    listRef.current?.querySelector<HTMLElement>(`[data-index="${index}"]`)?.focus();
  };
  const onKey = (e: React.KeyboardEvent) => {
    const current = shown[Math.min(selected, count - 1)];
    if (e.key === "ArrowDown") move(selected + 1);
    else if (e.key === "ArrowUp") move(selected - 1);
    else if (e.key === "Enter" && current) toggleOutput(current);
    else if (e.key === "Backspace" && current && running(current)) void stop(current);
    else if (e.key === "Escape") {
      stripOpen.set(false);
      focusComposer();
    } else return;
    e.preventDefault();
    e.stopPropagation();
  };

  const summary =
    active > 0
      ? `${active} background process${active === 1 ? "" : "es"} running`
      : `${count} background process${count === 1 ? "" : "es"}, none running`;

  return (
    <section className="bg-strip" aria-label="Background processes" data-open={open ? "true" : "false"}>
      <button type="button" className="bg-strip-head" aria-expanded={open} onClick={() => (open ? stripOpen.set(false) : toggleStrip())}>
        {open ? <ChevronDown size={14} aria-hidden /> : <ChevronRight size={14} aria-hidden />}
        <TerminalSquare size={14} aria-hidden />
        <span data-testid="bg-summary">{summary}</span>
      </button>
      {open ? (
        <div className="bg-strip-list" role="list" ref={listRef} tabIndex={-1} onKeyDown={onKey}>
          {shown.map((p, index) => (
            <div
              key={p.process_id}
              role="listitem"
              className={`bg-row${index === selected ? " selected" : ""}`}
              data-index={index}
              data-process-id={p.process_id}
              data-status={p.status}
              tabIndex={index === selected ? 0 : -1}
              onFocus={() => setSelected(index)}
            >
              <div className="bg-row-head">
                <button type="button" className="bg-row-name" onClick={() => toggleOutput(p)} aria-expanded={opened.has(p.process_id)}>
                  <span className={`bg-dot ${running(p) ? "on" : "off"}`} aria-hidden />
                  <strong>{p.display_name}</strong>
                </button>
                <span className="bg-row-status">
                  {p.status}
                  {p.exit_code !== null && !running(p) ? ` (exit ${p.exit_code})` : ""}
                  {p.monitored ? " · watched" : ""}
                  {" · since "}
                  {since(p.started_at)}
                </span>
                {running(p) ? (
                  <button type="button" className="btn bg-stop" onClick={() => void stop(p)} aria-label={`Stop ${p.display_name}`}>
                    <Square size={12} aria-hidden /> Stop
                  </button>
                ) : null}
              </div>
              <code className="bg-row-script">{p.script}</code>
              {opened.has(p.process_id) ? (
                <pre className="bg-row-lines" data-testid="bg-lines">
                  {(p.last_lines ?? []).join("\n") || "(no output yet)"}
                </pre>
              ) : p.last_lines && p.last_lines.length > 0 ? (
                <div className="bg-row-last" data-testid="bg-last-line">
                  {p.last_lines[p.last_lines.length - 1]}
                </div>
              ) : null}
            </div>
          ))}
          {error ? <div className="bg-error">{error}</div> : null}
        </div>
      ) : null}
    </section>
  );
}
