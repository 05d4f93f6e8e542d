// The transcript of one workspace, windowed: only rows near the viewport are in the DOM, so a
// workspace with thousands of messages paints as fast as a short one. It sticks to the bottom
// while the user is there, and loads older history when they scroll to the top.

import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useLayoutEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { errorMessage } from "../../api/http";
import { app, loadOlder, markRead, transcriptStore } from "../../state/app";
import { lastUserText, type Row } from "../../state/transcript";
import { useStore } from "../../lib/store";
import { AssistantMessage, ContextNote, InFlightMessage, Notice, TurnEnd, UserMessage } from "./Messages";
import { CompactionCard } from "./Compaction";
import { onJumpToBottom } from "./scrollBus";
import { ErrorCard } from "./ErrorCard";
import { ProviderNotice } from "../ProviderNotice";

type Item =
  | { kind: "row"; key: string; row: Row }
  | { kind: "inflight"; key: string }
  | { kind: "older"; key: string }
  | { kind: "status-error"; key: string };

function shown(row: Row): boolean {
  return !(row.kind === "turn-end" && row.reason === "completed");
}

function itemsOf(rows: readonly Row[], hasOlder: boolean, tail: "inflight" | "status-error" | null): Item[] {
  const items: Item[] = [];
  if (hasOlder) items.push({ kind: "older", key: "older" });
  for (const row of rows) if (shown(row)) items.push({ kind: "row", key: row.key, row });
  if (tail) items.push({ kind: tail, key: tail });
  return items;
}

/** Whether the newest row already shows the error the workspace status reports. */
function endsInError(rows: readonly Row[]): boolean {
  const last = rows[rows.length - 1];
  return last?.kind === "turn-end" && last.reason === "error";
}

function estimate(item: Item | undefined): number {
  if (!item || item.kind !== "row") return 48;
  const row = item.row;
  if (row.kind === "user") return 44 + Math.min(200, Math.ceil(row.text.length / 90) * 20);
  if (row.kind === "assistant") {
    return 24 + Math.min(600, Math.ceil(row.text.length / 100) * 21) + row.toolCalls.length * 42;
  }
  return 36;
}

const NEAR_BOTTOM_PX = 48;
let paintMarked = false;

export function Transcript(props: { workspaceId: string }) {
  const store = transcriptStore(props.workspaceId);
  const t = useStore(store, (s) => s);
  const status = useStore(app, (s) => s.statuses[props.workspaceId]);
  // The in-flight row shows while a reply streams, or while the server says a turn runs; a
  // turn that failed without a durable end shows the status error instead.
  const streaming = status === undefined ? t.turnOpen : status.state === "streaming" || status.state === "waiting";
  const tail =
    t.partial !== null || streaming
      ? "inflight"
      : status?.state === "error" && status.error && !endsInError(t.rows)
        ? "status-error"
        : null;
  // Rebuilt only when rows change, not on every streamed delta.
  const items = useMemo(() => itemsOf(t.rows, t.hasOlder, tail), [t.rows, t.hasOlder, tail]);
  const lastAssistant = useMemo(() => lastAssistantKey(t.rows), [t.rows]);
  const scrollRef = useRef<HTMLDivElement>(null);
  const innerRef = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const loadingOlder = useRef(false);
  const [olderError, setOlderError] = useState<string | null>(null);
  const firstKey = useRef<string | null>(null);
  const anchor = useRef<{ total: number; top: number } | null>(null);

  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: (i) => estimate(items[i]),
    getItemKey: (i) => items[i]?.key ?? i,
    overscan: 8,
    paddingStart: 8,
    paddingEnd: 16,
  });

  const scrollToBottom = () => {
    const el = scrollRef.current;
    if (el) el.scrollTop = el.scrollHeight;
  };

  // Keep the view pinned to the bottom while the user is there, whatever grows (new rows,
  // streaming text, a highlighter or diagram finishing, rows being measured).
  useLayoutEffect(() => {
    const inner = innerRef.current;
    if (!inner) return;
    const ro = new ResizeObserver(() => {
      if (stick.current) scrollToBottom();
    });
    ro.observe(inner);
    return () => ro.disconnect();
  }, []);

  useEffect(() => onJumpToBottom(() => {
    stick.current = true;
    scrollToBottom();
  }), []);

  // After older rows are prepended, keep the rows the user was looking at in place.
  const newFirst = t.rows[0]?.key ?? null;
  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (anchor.current && el && firstKey.current !== null && newFirst !== firstKey.current) {
      el.scrollTop = anchor.current.top + (virtualizer.getTotalSize() - anchor.current.total);
    }
    anchor.current = null;
    firstKey.current = newFirst;
  });

  useLayoutEffect(() => {
    if (stick.current) scrollToBottom();
  });

  const [, setScrolled] = useState(0);
  const onScroll = () => {
    const el = scrollRef.current;
    if (!el) return;
    stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM_PX;
    setScrolled((n) => n + 1);
  };

  const loadEarlier = () => {
    const el = scrollRef.current;
    if (!el || !t.hasOlder || loadingOlder.current) return;
    loadingOlder.current = true;
    anchor.current = { total: virtualizer.getTotalSize(), top: el.scrollTop };
    loadOlder(props.workspaceId)
      .then(() => setOlderError(null))
      .catch((exc: unknown) => setOlderError(errorMessage(exc)))
      .finally(() => {
        loadingOlder.current = false;
        setScrolled((n) => n + 1); // look again: still near the top loads the next page
      });
  };

  // Older history loads while the top of the transcript is in (or near) view, once the user has
  // scrolled up from the bottom (the first render starts at the top before it sticks down).
  const virtualItems = virtualizer.getVirtualItems();
  const nearTop = items[0]?.kind === "older" && virtualItems[0]?.index === 0;
  useEffect(() => {
    if (nearTop && !stick.current) loadEarlier();
  });

  // The workspace on screen is read: whatever arrives while it is viewed (a turn's end, a Start
  // Here) is marked read at once, wherever the user has scrolled, as long as the page is
  // visible; a page in a background tab marks it when it comes back to the front.
  const unread = status?.unread === true;
  const readUpTo = Math.max(status?.lastSeq ?? 0, t.lastSeq);
  useEffect(() => {
    if (!unread) return;
    const mark = () => {
      if (document.visibilityState === "visible") markRead(props.workspaceId, readUpTo);
    };
    mark();
    document.addEventListener("visibilitychange", mark);
    return () => document.removeEventListener("visibilitychange", mark);
  }, [unread, readUpTo, props.workspaceId]);

  // A marker for the first paint of a loaded transcript (read by the UI benchmark).
  const ready = t.loaded;
  useEffect(() => {
    if (!ready || paintMarked) return;
    paintMarked = true;
    requestAnimationFrame(() => {
      performance.mark("xum:transcript-painted");
    });
  }, [ready]);

  const lastRowKey = t.rows[t.rows.length - 1]?.key;

  const render = (item: Item): ReactNode => {
    if (item.kind === "older") {
      return (
        <div style={{ textAlign: "center" }}>
          <button type="button" className="btn" onClick={loadEarlier}>
            {olderError ?? "Load earlier messages"}
          </button>
        </div>
      );
    }
    if (item.kind === "status-error") {
      return (
        <ErrorCard
          error={status?.error ?? null}
          prompt={lastUserText(t)}
          workspaceId={props.workspaceId}
          isLast
        />
      );
    }
    if (item.kind === "inflight") {
      return (
        <InFlightMessage
          partial={t.partial}
          retrying={t.retrying}
          stalled={t.stalled}
          governor={t.governor}
          workspaceId={props.workspaceId}
          waiting={status?.state === "waiting"}
          compacting={t.compacting}
        />
      );
    }
    const row = item.row;
    switch (row.kind) {
      case "user":
        return <UserMessage row={row} workspaceId={props.workspaceId} />;
      case "assistant":
        return (
          <AssistantMessage
            row={row}
            running={t.running}
            live={t.live}
            turnOpen={t.turnOpen && row.key === lastAssistant}
            workspaceId={props.workspaceId}
          />
        );
      case "turn-end":
        return <TurnEnd row={row} workspaceId={props.workspaceId} isLast={row.key === lastRowKey && !t.turnOpen} />;
      case "notice":
        return <Notice row={row} />;
      case "compaction":
        return <CompactionCard row={row} />;
      case "context-note":
        return <ContextNote row={row} />;
    }
  };

  return (
    <div
      className="transcript"
      ref={scrollRef}
      onScroll={onScroll}
      data-transcript-ready={ready ? "true" : "false"}
      data-row-count={t.rows.length}
      role="log"
      aria-label="Conversation"
    >
      {ready && items.length === 0 ? (
        <div className="empty-state">
          Send a message to start. The agent works in this workspace's directory.
          <ProviderNotice />
        </div>
      ) : null}
      <div className="transcript-inner" ref={innerRef} style={{ height: virtualizer.getTotalSize() }}>
        {virtualItems.map((v) => {
          const item = items[v.index];
          if (!item) return null;
          return (
            <div
              key={v.key}
              className="row"
              data-index={v.index}
              ref={virtualizer.measureElement}
              style={{ transform: `translateY(${v.start}px)` }}
            >
              <div className="row-content">{render(item)}</div>
            </div>
          );
        })}
      </div>
    </div>
  );
}

function lastAssistantKey(rows: readonly Row[]): string | null {
  for (let i = rows.length - 1; i >= 0; i--) {
    const row = rows[i];
    if (row?.kind === "assistant") return row.key;
  }
  return null;
}
