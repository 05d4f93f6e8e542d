import type { WorkspaceStatus } from "../api/types";

export type StatusKind = "streaming" | "waiting" | "error" | "unread" | "idle" | "offline";

export function statusKind(status: WorkspaceStatus | undefined): StatusKind {
  if (!status) return "idle";
  if (status.state === "streaming") return "streaming";
  if (status.state === "waiting") return "waiting";
  if (status.state === "error") return "error";
  if (status.unread) return "unread";
  return "idle";
}

const LABELS: Record<StatusKind, string> = {
  streaming: "working",
  waiting: "waiting for input",
  error: "error",
  unread: "unread",
  idle: "idle",
  offline: "offline: the server cannot be reached",
};

export function statusLabel(kind: StatusKind): string {
  return LABELS[kind];
}

/** `offline`: the server is out of reach, so the status the page has may be stale. */
export function StatusDot(props: { status: WorkspaceStatus | undefined; offline?: boolean }) {
  const kind = props.offline ? "offline" : statusKind(props.status);
  return <span className={`status-dot ${kind}`} role="img" aria-label={LABELS[kind]} data-status={kind} />;
}
