// The one WebSocket at `/api/ws`: workspace subscriptions multiplexed over it, reconnect with
// backoff, and resume from the last committed seq per workspace (docs/api.md).

import { backoffDelay, SubscriptionBook } from "../lib/reconnect";
import type {
  AuthStatus,
  ClientMessage,
  EngineEvent,
  InboxMessage,
  NotificationNotice,
  PartialMessage,
  PendingQuestion,
  ServerMessage,
  WorkspaceStatus,
} from "./types";

export type ConnectionState = "connecting" | "open" | "closed";

export interface SocketHandlers {
  /** The in-flight message must be forgotten: a (re)subscribe is about to replay it. */
  onResubscribe(workspaceId: string): void;
  onEvents(workspaceId: string, events: EngineEvent[]): void;
  onPartial(workspaceId: string, message: PartialMessage): void;
  onSubscribed(workspaceId: string, status: WorkspaceStatus): void;
  onStatus(workspaceId: string, status: WorkspaceStatus): void;
  onWorkspacesChanged(): void;
  /** A question now waits for the user (null: the question `closedId` was answered or dropped). */
  onQuestion(workspaceId: string, question: PendingQuestion | null, closedId?: string): void;
  onConnection(state: ConnectionState): void;
  /** The attention inbox: its snapshot after hello, then each item added or removed. */
  onInbox(message: InboxMessage): void;
  /** A desktop notification to show (docs/notifications.md); absent: none are asked for. */
  onNotification?(notice: NotificationNotice): void;
  /** The handshake was refused (not signed in; `sessionEnded`: this browser's sign-in ended). */
  onUnauthorized(sessionEnded: boolean): void;
}

const PING_EVERY_MS = 20_000;
const PONG_WITHIN_MS = 10_000;

export class EventSocket {
  private ws: WebSocket | null = null;
  private readonly book = new SubscriptionBook();
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private pingTimer: ReturnType<typeof setInterval> | null = null;
  private pongDeadline: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  private opened = false;
  /** Whether a hello arrived before: only a reconnect can have missed list changes. */
  private greeted = false;
  /** Events are delivered once per animation frame per workspace, in order. */
  private pending = new Map<string, EngineEvent[]>();
  private flushScheduled = false;

  constructor(private readonly handlers: SocketHandlers) {}

  start(): void {
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    this.clearTimers();
    this.ws?.close();
    this.ws = null;
  }

  /** Follow a workspace from `afterSeq` (its transcript's last committed seq). */
  subscribe(workspaceId: string, afterSeq: number): void {
    this.flush(); // deliver what is queued before the in-flight message is reset
    const msg = this.book.subscribe(workspaceId, afterSeq);
    this.handlers.onResubscribe(workspaceId);
    this.send(msg);
  }

  unsubscribe(workspaceId: string): void {
    const msg = this.book.unsubscribe(workspaceId);
    this.pending.delete(workspaceId);
    if (msg) this.send(msg);
  }

  isSubscribed(workspaceId: string): boolean {
    return this.book.has(workspaceId);
  }

  /** Drop the socket now and reconnect (used by tests and after the device wakes). */
  reconnectNow(): void {
    this.ws?.close();
  }

  /** While waiting to reconnect: try now, and start the backoff over. */
  retryNow(): void {
    if (this.stopped || this.ws !== null || this.retryTimer === null) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.attempt = 0;
    this.connect();
  }

  private url(): string {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    return `${proto}//${location.host}/api/ws`;
  }

  private connect(): void {
    if (this.stopped) return;
    this.handlers.onConnection("connecting");
    const ws = new WebSocket(this.url());
    this.ws = ws;
    this.opened = false;
    ws.onopen = () => {
      this.opened = true;
    };
    ws.onmessage = (msg) => {
      if (typeof msg.data !== "string") return;
      let data: ServerMessage;
      try {
        data = JSON.parse(msg.data) as ServerMessage;
      } catch {
        return;
      }
      this.receive(data);
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.clearTimers();
      this.flush();
      this.handlers.onConnection("closed");
      if (this.stopped) return;
      if (!this.opened || ev.code === 4401 || ev.code === 1008) {
        // A refused handshake looks the same as a server that is down: ask the server which.
        void this.checkAuth().then((ok) => {
          if (ok) this.scheduleReconnect();
        });
        return;
      }
      this.scheduleReconnect();
    };
  }

  private async checkAuth(): Promise<boolean> {
    try {
      const res = await fetch("/api/auth/status", { credentials: "same-origin" });
      if (res.ok) {
        const status = (await res.json()) as AuthStatus;
        if (status.authRequired && !status.authenticated) {
          this.handlers.onUnauthorized(status.sessionEnded === true);
          return false;
        }
      }
    } catch {
      // server down: keep retrying
    }
    return true;
  }

  private scheduleReconnect(): void {
    const delay = backoffDelay(this.attempt);
    this.attempt += 1;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect();
    }, delay);
  }

  private clearTimers(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.pingTimer) clearInterval(this.pingTimer);
    if (this.pongDeadline) clearTimeout(this.pongDeadline);
    this.retryTimer = null;
    this.pingTimer = null;
    this.pongDeadline = null;
  }

  private send(msg: ClientMessage): void {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
    // Otherwise the subscription is in the book and is sent after the next hello.
  }

  private startHeartbeat(): void {
    this.pingTimer = setInterval(() => {
      this.send({ type: "ping" });
      if (this.pongDeadline) return;
      this.pongDeadline = setTimeout(() => {
        // No answer: the connection is dead without a close frame (sleep, network change).
        this.ws?.close();
      }, PONG_WITHIN_MS);
    }, PING_EVERY_MS);
  }

  private receive(msg: ServerMessage): void {
    switch (msg.type) {
      case "hello":
        this.attempt = 0;
        this.handlers.onConnection("open");
        this.startHeartbeat();
        this.send({ type: "inbox-subscribe" }); // its snapshot, then every change (docs/api.md)
        if (this.handlers.onNotification) this.send({ type: "notifications-subscribe" });
        for (const sub of this.book.resubscribeAll()) {
          if (sub.type === "subscribe") this.handlers.onResubscribe(sub.workspaceId);
          this.send(sub);
        }
        if (this.greeted) this.handlers.onWorkspacesChanged(); // changes while we were away
        this.greeted = true;
        return;
      case "pong":
        if (this.pongDeadline) clearTimeout(this.pongDeadline);
        this.pongDeadline = null;
        return;
      case "event": {
        const ev = msg.event;
        const seq = (ev as { seq?: unknown }).seq;
        if (typeof seq === "number" && !this.book.noteSeq(msg.workspaceId, seq)) return;
        if (typeof seq !== "number" && !this.book.has(msg.workspaceId)) return;
        this.queue(msg.workspaceId, ev);
        return;
      }
      case "partial":
        if (!this.book.has(msg.workspaceId)) return;
        this.flushOne(msg.workspaceId);
        this.handlers.onPartial(msg.workspaceId, msg.message);
        return;
      case "subscribed":
        this.flushOne(msg.workspaceId);
        this.handlers.onSubscribed(msg.workspaceId, msg.status);
        return;
      case "resync": {
        this.flushOne(msg.workspaceId);
        const sub = this.book.resync(msg.workspaceId);
        if (sub) {
          this.handlers.onResubscribe(msg.workspaceId);
          this.send(sub);
        }
        return;
      }
      case "workspace-status":
        this.handlers.onStatus(msg.workspaceId, msg.status);
        return;
      case "workspaces-changed":
        this.handlers.onWorkspacesChanged();
        return;
      case "question":
        this.flushOne(msg.workspaceId);
        this.handlers.onQuestion(msg.workspaceId, { questionId: msg.questionId, questions: msg.questions });
        return;
      case "question-closed":
        this.flushOne(msg.workspaceId);
        this.handlers.onQuestion(msg.workspaceId, null, msg.questionId);
        return;
      case "inbox":
      case "inbox-added":
      case "inbox-removed":
        this.handlers.onInbox(msg);
        return;
      case "notification":
        this.handlers.onNotification?.(msg.notification);
        return;
      case "error":
        return;
    }
  }

  // Deltas can arrive hundreds per second; applying them once per frame keeps rendering cheap.
  private queue(workspaceId: string, ev: EngineEvent): void {
    const list = this.pending.get(workspaceId);
    if (list) list.push(ev);
    else this.pending.set(workspaceId, [ev]);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      const run = (): void => {
        this.flushScheduled = false;
        this.flush();
      };
      if (typeof requestAnimationFrame === "function" && document.visibilityState === "visible") {
        requestAnimationFrame(run);
      } else {
        setTimeout(run, 16);
      }
    }
  }

  private flushOne(workspaceId: string): void {
    const list = this.pending.get(workspaceId);
    if (!list) return;
    this.pending.delete(workspaceId);
    this.handlers.onEvents(workspaceId, list);
  }

  private flush(): void {
    const all = this.pending;
    this.pending = new Map();
    for (const [id, list] of all) this.handlers.onEvents(id, list);
  }
}
