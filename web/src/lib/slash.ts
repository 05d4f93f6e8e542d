// Slash-command input: what the user is typing, and suggestions from the server's registry.

import type { SlashCommand } from "../api/types";

/** The command name being typed (`/mo` -> "mo"), or null when the input is not a command name. */
export function slashQuery(text: string): string | null {
  const m = /^\/(\S*)$/.exec(text);
  return m ? (m[1] ?? "") : null;
}

export interface ParsedSlash {
  name: string;
  /** Text after the name on the first line. */
  args: string;
  /** Lines after the first (e.g. the start message of `/fork`). */
  rest: string;
}

export function parseSlash(text: string): ParsedSlash | null {
  const m = /^\/([^\s]+)[ \t]*([^\n]*)(?:\n([\s\S]*))?$/.exec(text);
  if (!m || !m[1]) return null;
  return { name: m[1], args: (m[2] ?? "").trim(), rest: (m[3] ?? "").trim() };
}

export function matchSlash(commands: readonly SlashCommand[], query: string): SlashCommand[] {
  const q = query.toLowerCase();
  const prefix = commands.filter((c) => c.name.toLowerCase().startsWith(q));
  const inner = commands.filter(
    (c) => !c.name.toLowerCase().startsWith(q) && c.name.toLowerCase().includes(q),
  );
  return [...prefix, ...inner];
}

/** What accepting a suggestion puts in the input: `/+` waits for its level, the rest a space. */
export function slashInsertion(cmd: SlashCommand): string {
  return cmd.name.endsWith("+") ? `/${cmd.name}` : `/${cmd.name} `;
}

/** Whether a command does something without arguments: every part of its usage is optional
 * (`[...]`). An override (`/alias message`, `/+level`) always needs what follows it. */
export function runsBare(cmd: SlashCommand): boolean {
  if (cmd.name.endsWith("+") || cmd.kind === "override") return false;
  const required = (cmd.usage ?? "").replace(/\[[^\]]*\]/g, "").trim();
  return required === "";
}

/** What Enter does with the highlighted suggestion: send the command as it stands (the text is
 * already the whole command, or the command needs nothing more), or complete it so the user can
 * type its arguments. */
export function slashEnter(text: string, cmd: SlashCommand): { send: string } | { complete: string } {
  const needsMore = cmd.name.endsWith("+") || cmd.kind === "override";
  if (!needsMore && (text.trim() === `/${cmd.name}` || runsBare(cmd))) return { send: `/${cmd.name}` };
  return { complete: slashInsertion(cmd) };
}
