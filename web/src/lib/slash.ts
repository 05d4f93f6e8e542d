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
