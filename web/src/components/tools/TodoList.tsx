import { CheckCircle2, Circle, CircleDot } from "lucide-react";

export interface Todo {
  content: string;
  status: string;
}

export function todosFrom(value: unknown): Todo[] | null {
  if (!Array.isArray(value)) return null;
  const out: Todo[] = [];
  for (const item of value) {
    if (typeof item !== "object" || item === null) continue;
    const t = item as Record<string, unknown>;
    if (typeof t.content === "string") {
      out.push({ content: t.content, status: typeof t.status === "string" ? t.status : "pending" });
    }
  }
  return out;
}

export function todoProgress(todos: Todo[]): { done: number; total: number } {
  return { done: todos.filter((t) => t.status === "completed").length, total: todos.length };
}

export function Progress(props: { done: number; total: number }) {
  const pct = props.total === 0 ? 0 : Math.round((props.done / props.total) * 100);
  return (
    <span style={{ display: "inline-flex", alignItems: "center", gap: 6 }}>
      <span className="progress" role="progressbar" aria-valuenow={props.done} aria-valuemin={0} aria-valuemax={props.total}>
        <div style={{ width: `${pct}%` }} />
      </span>
      <span className="counter-nums">
        {props.done}/{props.total}
      </span>
    </span>
  );
}

export function TodoList(props: { todos: Todo[] }) {
  if (props.todos.length === 0) return <div className="muted">The task list is empty.</div>;
  return (
    <ul className="todo-list">
      {props.todos.map((t, i) => (
        <li key={i} className={t.status}>
          {t.status === "completed" ? (
            <CheckCircle2 size={15} aria-label="completed" color="var(--color-success)" />
          ) : t.status === "in_progress" ? (
            <CircleDot size={15} aria-label="in progress" color="var(--color-accent)" />
          ) : (
            <Circle size={15} aria-label="pending" color="var(--color-text-faint)" />
          )}
          <span>{t.content}</span>
        </li>
      ))}
    </ul>
  );
}
