import { describe, expect, it } from "vitest";
import { loadOnce } from "../components/markdown/lazy";

describe("loadOnce", () => {
  it("loads once and shares the result", async () => {
    let calls = 0;
    const load = loadOnce(async () => ++calls);
    expect(await Promise.all([load(), load()])).toEqual([1, 1]);
    expect(await load()).toBe(1);
    expect(calls).toBe(1);
  });

  it("forgets a failed load so the next use tries again", async () => {
    let calls = 0;
    const load = loadOnce(async () => {
      calls += 1;
      if (calls === 1) throw new Error("Failed to fetch dynamically imported module");
      return "ready";
    }, []);
    await expect(load()).rejects.toThrow("Failed to fetch");
    expect(await load()).toBe("ready");
    expect(calls).toBe(2);
  });

  it("tries a failed load again before giving up", async () => {
    let calls = 0;
    const load = loadOnce(async () => {
      calls += 1;
      if (calls < 3) throw new Error("Failed to fetch dynamically imported module");
      return "ready";
    }, [1, 1]);
    expect(await load()).toBe("ready");
    expect(calls).toBe(3);
  });

  it("gives up after the last retry", async () => {
    let calls = 0;
    const load = loadOnce(async () => {
      calls += 1;
      throw new Error("Failed to fetch dynamically imported module");
    }, [1, 1]);
    await expect(load()).rejects.toThrow("Failed to fetch");
    expect(calls).toBe(3);
  });
});
