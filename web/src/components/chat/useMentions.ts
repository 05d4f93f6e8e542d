// `@` mentions for the composer: while the caret is in an `@word`, the workspace's paths
// that match it (`GET /api/workspaces/{id}/files?q=`, asked at most every 120 ms), then its MCP
// servers' resources as `server:uri` (`GET /api/workspaces/{id}/mcp/resources`, asked once and
// reused for RESOURCES_FRESH_MS, filtered here), the highlighted one, and accepting it (the word
// becomes `@path ` or `@server:uri `; the server attaches a mentioned resource when it is sent).

import { useEffect, useState } from "react";
import { api } from "../../api/http";
import type { FileMatches, McpResourceList } from "../../api/types";
import { insertMention, mentionAt, resourceMatches, type Mention } from "../../lib/mentions";
import { useStore } from "../../lib/store";
import { app } from "../../state/app";

const DEBOUNCE_MS = 120;
const RESOURCES_FRESH_MS = 15_000;

export interface Mentions {
  open: boolean;
  paths: readonly string[];
  /** Whether a suggestion is an MCP resource (`server:uri`) rather than a file. */
  isResource: (item: string) => boolean;
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
  const [resources, setResources] = useState<{ workspace: string; at: number; mentions: readonly string[] } | null>(
    null,
  );
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

  const open = query !== null;
  useEffect(() => {
    if (!open) return;
    if (resources && resources.workspace === workspaceId && Date.now() - resources.at < RESOURCES_FRESH_MS) return;
    let live = true;
    const noted = (mentions: readonly string[]) => live && setResources({ workspace: workspaceId, at: Date.now(), mentions });
    api<McpResourceList>("GET", `/api/workspaces/${encodeURIComponent(workspaceId)}/mcp/resources`)
      .then((r) => noted(r.resources.map((x) => x.mention)))
      .catch(() => noted([]));
    return () => {
      live = false;
    };
  }, [open, workspaceId, resources]);

  // Only the answer to what is typed now is offered (not a stale one while the next is asked).
  const files = mention !== null && forQuery === query ? paths : [];
  const known = resources && resources.workspace === workspaceId ? resources.mentions : [];
  const matched = query !== null ? resourceMatches(known, query) : [];
  const shown = [...files, ...matched.filter((m) => !files.includes(m))];
  const resourceSet = new Set(matched);
  const clamped = Math.min(active, Math.max(0, shown.length - 1));
  return {
    open: shown.length > 0,
    paths: shown,
    isResource: (item) => resourceSet.has(item),
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
