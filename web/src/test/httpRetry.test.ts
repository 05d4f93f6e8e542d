import { afterEach, describe, expect, it, vi } from "vitest";
import { api, ApiError, READ_RETRY_DELAYS_MS } from "../api/http";

function answer(body: unknown): Response {
  return new Response(JSON.stringify(body), { status: 200, headers: { "Content-Type": "application/json" } });
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe("api network failures", () => {
  it("sends a read again after a dropped connection", async () => {
    vi.useFakeTimers();
    const fetchMock = vi
      .fn()
      .mockRejectedValueOnce(new TypeError("Failed to fetch"))
      .mockResolvedValueOnce(answer({ events: [] }));
    vi.stubGlobal("fetch", fetchMock);
    const pending = api<{ events: unknown[] }>("GET", "/api/workspaces/w/history");
    await vi.advanceTimersByTimeAsync(READ_RETRY_DELAYS_MS[0] ?? 0);
    expect(await pending).toEqual({ events: [] });
    expect(fetchMock).toHaveBeenCalledTimes(2);
  });

  it("gives up on a read after its retries, saying the server cannot be reached", async () => {
    vi.useFakeTimers();
    const fetchMock = vi.fn().mockRejectedValue(new TypeError("Failed to fetch"));
    vi.stubGlobal("fetch", fetchMock);
    const pending = api("GET", "/api/workspaces").catch((exc: unknown) => exc);
    for (const delay of READ_RETRY_DELAYS_MS) await vi.advanceTimersByTimeAsync(delay);
    const exc = await pending;
    expect(exc).toBeInstanceOf(ApiError);
    expect((exc as ApiError).code).toBe("network");
    expect(fetchMock).toHaveBeenCalledTimes(READ_RETRY_DELAYS_MS.length + 1);
  });

  it("sends a write once: the server may have acted on it", async () => {
    const fetchMock = vi.fn().mockRejectedValue(new TypeError("Failed to fetch"));
    vi.stubGlobal("fetch", fetchMock);
    await expect(api("POST", "/api/workspaces/w/messages", { text: "hi" })).rejects.toBeInstanceOf(ApiError);
    expect(fetchMock).toHaveBeenCalledTimes(1);
  });
});
