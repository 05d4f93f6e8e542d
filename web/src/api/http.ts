// JSON over HTTP to `/api/` (docs/api.md). Every error answer has one shape; a 401 means the
// browser is not signed in (or its session ended), which the app turns into the sign-in screen.

import type { ApiErrorBody } from "./types";

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly hint: string | null;

  constructor(status: number, body: ApiErrorBody) {
    super(body.message);
    this.status = status;
    this.code = body.code;
    this.hint = body.hint ?? null;
  }
}

let onUnauthorized: () => void = () => undefined;

export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

function errorBody(status: number, data: unknown): ApiErrorBody {
  if (typeof data === "object" && data !== null && "error" in data) {
    const err = (data as { error: unknown }).error;
    if (typeof err === "object" && err !== null && "message" in err) {
      const e = err as Partial<ApiErrorBody>;
      return { code: String(e.code ?? "error"), message: String(e.message), hint: e.hint ?? null };
    }
  }
  return { code: status === 401 ? "unauthorized" : "error", message: `HTTP ${status}` };
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  // A Blob (an image upload) goes as its raw bytes; anything else as JSON.
  const raw = body instanceof Blob;
  const init: RequestInit = {
    method,
    credentials: "same-origin",
    headers: body === undefined ? {} : { "Content-Type": raw ? "application/octet-stream" : "application/json" },
  };
  if (body !== undefined) init.body = raw ? body : JSON.stringify(body);
  const res = await fetchRetryingReads(path, init);
  const text = await res.text();
  let data: unknown = null;
  if (text !== "") {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!res.ok) {
    if (res.status === 401 && !path.startsWith("/api/auth/")) onUnauthorized();
    throw new ApiError(res.status, errorBody(res.status, data));
  }
  return data as T;
}

/** Pauses before a read is sent again after a network failure (a dropped keep-alive
 * connection, a server restarting, a moment without network). */
export const READ_RETRY_DELAYS_MS = [250, 1000];

/** `fetch`, with a read (GET) sent again after a network failure: it changes nothing, so a
 * transcript or a cost table is not left empty by one dropped connection. A write is sent once:
 * the server may have acted on it before the connection broke. */
async function fetchRetryingReads(path: string, init: RequestInit): Promise<Response> {
  const delays = init.method === "GET" ? READ_RETRY_DELAYS_MS : [];
  for (let attempt = 0; ; attempt++) {
    try {
      return await fetch(path, init);
    } catch (exc) {
      if (attempt >= delays.length) {
        throw new ApiError(0, {
          code: "network",
          message: "The xum server cannot be reached.",
          hint: exc instanceof Error ? exc.message : null,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, delays[attempt]));
    }
  }
}

export function qs(params: Record<string, string | number | boolean | null | undefined>): string {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) out.set(k, String(v));
  const s = out.toString();
  return s ? `?${s}` : "";
}

export function errorMessage(exc: unknown): string {
  if (exc instanceof ApiError) return exc.hint ? `${exc.message} (${exc.hint})` : exc.message;
  if (exc instanceof Error) return exc.message;
  return String(exc);
}
