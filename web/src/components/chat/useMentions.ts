// `@` file mentions for the composer: while the caret is in an `@word`, the workspace's paths
// that match it (`GET /api/workspaces/{id}/files?q=`, asked at most every 120 ms), the
// highlighted one, and accepting it (the word becomes `@path `).

import { useEffect, useState } from "react";
import { api } from "../../api/http";
import type { FileMatches } from "../../api/types";
import { insertMention, mentionAt, type Mention } from "../../lib/mentions";
import { useStore } from "../../lib/store";
import { app } from "../../state/app";

const DEBOUNCE_MS = 120;

export interface Mentions {
  open: boolean;
  paths: readonly string[];
  active: number;
  move: (delta: 1 | -1) => void;
  /** The text and caret after accepting `path` (default: the highlighted one), or null. */
  accept: (path?: string) => { text: string; caret: number } | null;
  dismiss: () => void;
}

export function useMentions(workspaceId: string, text: string, caret: number): Mentions {
  const allowed = useStore(app, (s) => s.caps.files);
  const [paths, setPaths] = useState<readonly string[]>([]);
  const [forQuery, setForQuery] = useState<string | null>(null);
  const [active, setActive] = useState(0);
  const [dismissedAt, setDismissedAt] = useState<string | null>(null);
  const mention: Mention | null = allowed && text !== dismissedAt ? mentionAt(text, caret) : null;
  const query = mention?.query ?? null;

  useEffect(() => {
    if (query === null) return;
    let live = true;
    const timer = setTimeout(() => {
      const q = encodeURIComponent(query);
      api<FileMatches>("GET", `/api/workspaces/${encodeURIComponent(workspaceId)}/files?q=${q}`)
        .then((r) => {
          if (!live) return;
          setPaths(r.paths);
          setForQuery(query);
          setActive(0);
        })
        .catch(() => live && setPaths([]));
    }, DEBOUNCE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [query, workspaceId]);

  // Only the answer to what is typed now is offered (not a stale one while the next is asked).
  const shown = mention !== null && forQuery === query ? paths : [];
  const clamped = Math.min(active, Math.max(0, shown.length - 1));
  return {
    open: shown.length > 0,
    paths: shown,
    active: clamped,
    move: (delta) => setActive((clamped + delta + shown.length) % Math.max(1, shown.length)),
    accept: (path) => {
      const chosen = path ?? shown[clamped];
      if (!mention || chosen === undefined) return null;
      const next = insertMention(text, mention, chosen);
      setDismissedAt(next.text);
      return next;
    },
    dismiss: () => setDismissedAt(text),
  };
}
