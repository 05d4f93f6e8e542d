// Tool-call arguments arrive as JSON text (possibly partial while streaming, or invalid).

export type Args = Readonly<Record<string, unknown>>;

export function parseArgs(raw: string | unknown): Args | null {
  if (typeof raw !== "string") {
    return typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Args) : null;
  }
  if (raw.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Args)
      : null;
  } catch {
    return null;
  }
}

export function str(args: Args | null | undefined, key: string): string | null {
  const v = args?.[key];
  return typeof v === "string" ? v : null;
}

export function num(args: Args | null | undefined, key: string): number | null {
  const v = args?.[key];
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

export function firstLine(text: string, max = 120): string {
  const line = text.split("\n", 1)[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function pretty(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}
