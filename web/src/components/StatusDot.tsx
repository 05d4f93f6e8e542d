import type { WorkspaceStatus } from "../api/types";

export type StatusKind = "streaming" | "waiting" | "error" | "unread" | "idle";

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
};

export function statusLabel(kind: StatusKind): string {
  return LABELS[kind];
}

export function StatusDot(props: { status: WorkspaceStatus | undefined }) {
  const kind = statusKind(props.status);
  return <span className={`status-dot ${kind}`} role="img" aria-label={LABELS[kind]} data-status={kind} />;
}
