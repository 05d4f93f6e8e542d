// `@` file mentions in the composer: the `@word` the caret is in, and what accepting a path puts
// there. A mention starts at the beginning of the text or after whitespace (an address such as
// me@example.com is not one) and runs to the caret.

export interface Mention {
  /** Where the `@` is. */
  start: number;
  /** What is typed after the `@`, up to the caret. */
  query: string;
}

export function mentionAt(text: string, caret: number): Mention | null {
  const before = text.slice(0, caret);
  const m = /(^|\s)@([^\s@]*)$/.exec(before);
  if (!m) return null;
  const query = m[2] ?? "";
  return { start: caret - query.length - 1, query };
}

/** The text with the mention at `mention` (and the rest of its word) replaced by `@path `, and
 * where the caret goes. */
export function insertMention(text: string, mention: Mention, path: string): { text: string; caret: number } {
  let end = mention.start + 1 + mention.query.length;
  while (end < text.length && !/\s/.test(text[end] ?? "")) end += 1;
  const inserted = `@${path} `;
  const after = text.slice(end).replace(/^ /, "");
  return { text: text.slice(0, mention.start) + inserted + after, caret: mention.start + inserted.length };
}

/** The MCP resource mentions (`server:uri`) that match what is typed after the `@`
 * (case-insensitive, anywhere in the mention), at most `limit`. */
export function resourceMatches(mentions: readonly string[], query: string, limit = 20): string[] {
  const q = query.toLowerCase();
  return mentions.filter((m) => m.toLowerCase().includes(q)).slice(0, limit);
}
