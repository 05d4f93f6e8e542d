// Reconnect bookkeeping for the event socket: backoff delays and, per workspace, the last
// committed seq seen, so a new socket resumes every subscription exactly where it stopped
// (docs/api.md, "Resume semantics").

import type { ClientMessage } from "../api/types";

export const BACKOFF_BASE_MS = 250;
export const BACKOFF_MAX_MS = 10_000;

/** Delay before reconnect attempt `attempt` (0-based): exponential, capped, with jitter. */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const exp = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempt));
  // Keep at least half the delay so clients that dropped together do not return together.
  return Math.round(exp / 2 + (exp / 2) * random());
}

export class SubscriptionBook {
  private readonly seqs = new Map<string, number>();

  /** Start (or restart) following a workspace from `afterSeq`; returns the subscribe message. */
  subscribe(workspaceId: string, afterSeq: number): ClientMessage {
    const known = this.seqs.get(workspaceId) ?? 0;
    const from = Math.max(known, afterSeq);
    this.seqs.set(workspaceId, from);
    return { type: "subscribe", workspaceId, afterSeq: from };
  }

  unsubscribe(workspaceId: string): ClientMessage | null {
    if (!this.seqs.delete(workspaceId)) return null;
    return { type: "unsubscribe", workspaceId };
  }

  has(workspaceId: string): boolean {
    return this.seqs.has(workspaceId);
  }

  /** Record a committed event; returns false when it is a duplicate (already seen). */
  noteSeq(workspaceId: string, seq: number): boolean {
    const known = this.seqs.get(workspaceId);
    if (known === undefined) return false; // not subscribed (late event after unsubscribe)
    if (seq <= known) return false;
    this.seqs.set(workspaceId, seq);
    return true;
  }

  lastSeq(workspaceId: string): number | undefined {
    return this.seqs.get(workspaceId);
  }

  /** Messages that restore every subscription on a fresh socket. */
  resubscribeAll(): ClientMessage[] {
    return [...this.seqs].map(([workspaceId, afterSeq]) => ({
      type: "subscribe",
      workspaceId,
      afterSeq,
    }));
  }

  /** After `resync`: the subscribe message that resumes from the last seq received. */
  resync(workspaceId: string): ClientMessage | null {
    const seq = this.seqs.get(workspaceId);
    if (seq === undefined) return null;
    return { type: "subscribe", workspaceId, afterSeq: seq };
  }
}
