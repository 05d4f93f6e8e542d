// Syntax highlighting with lowlight, which returns a syntax tree (not an HTML string): it is
// turned into React elements, so React's escaping stays in effect and no HTML sink is needed.
// The grammars load on first use so the first paint of a transcript does not wait for them.

import { createElement, type ReactNode } from "react";
import type { ElementContent, Root } from "hast";
import { loadOnce } from "./lazy";

interface Highlighter {
  highlight(language: string, code: string): Root;
  highlightAuto(code: string): Root;
  registered(language: string): boolean;
}

let instance: Highlighter | null = null;
const waiters = new Set<() => void>();

export function getHighlighter(): Highlighter | null {
  return instance;
}

/** Start loading the grammars when the browser is idle: code shows as plain text until then,
 * so highlighting never delays the first paint of a transcript. */
export const loadHighlighter: () => Promise<Highlighter> = loadOnce(() =>
  whenIdle()
    .then(() => import("lowlight"))
    .then(({ createLowlight, common }) => {
      instance = createLowlight(common);
      for (const w of waiters) w();
      waiters.clear();
      return instance;
    }),
);

function whenIdle(): Promise<void> {
  return new Promise((resolve) => {
    if (typeof requestIdleCallback === "function") requestIdleCallback(() => resolve(), { timeout: 1500 });
    else setTimeout(resolve, 200);
  });
}

export function onHighlighterReady(cb: () => void): () => void {
  waiters.add(cb);
  return () => waiters.delete(cb);
}

function toReact(node: ElementContent, key: number): ReactNode {
  if (node.type === "text") return node.value;
  if (node.type !== "element") return null;
  const cls = node.properties?.className;
  const className = Array.isArray(cls) ? cls.map(String).join(" ") : undefined;
  return createElement(
    "span",
    { key, className },
    node.children.map((child, i) => toReact(child, i)),
  );
}

const MAX_HIGHLIGHT_CHARS = 100_000;

/** Highlighted React nodes, or null when the language is unknown or highlighting is not loaded. */
export function highlightToReact(code: string, language: string | null): ReactNode[] | null {
  const hl = instance;
  if (!hl || code.length > MAX_HIGHLIGHT_CHARS) return null;
  let tree: Root;
  try {
    if (language && hl.registered(language)) tree = hl.highlight(language, code);
    else return null;
  } catch {
    return null;
  }
  return tree.children.map((child, i) => toReact(child as ElementContent, i));
}
