import { afterEach, describe, expect, it, vi } from "vitest";
import type { NotificationNotice } from "../api/types";

// A browser's Notification API as far as the page uses it: permission, one prompt, and the
// notifications made (with their click handler).
function fakeBrowser(permission: NotificationPermission, answer: NotificationPermission) {
  const made: { title: string; options: NotificationOptions; onclick: (() => void) | null }[] = [];
  let prompts = 0;
  class FakeNotification {
    static permission = permission;
    static requestPermission = async () => {
      prompts += 1;
      FakeNotification.permission = answer;
      return answer;
    };
    onclick: (() => void) | null = null;
    constructor(title: string, options: NotificationOptions) {
      made.push(this as unknown as (typeof made)[number]);
      Object.assign(this, { title, options });
    }
    close() {}
  }
  const stored = new Map<string, string>();
  const focus = vi.fn();
  vi.stubGlobal("window", {
    Notification: FakeNotification,
    localStorage: { getItem: (k: string) => stored.get(k) ?? null, setItem: (k: string, v: string) => stored.set(k, v) },
    focus,
  });
  return { made, prompts: () => prompts, focus };
}

const notice: NotificationNotice = {
  id: "notice-1",
  source: "notify",
  workspaceId: "ws-1",
  workspaceName: "fix-login",
  project: "/p",
  title: "Tests pass",
  body: "41 green",
  since: 0,
};

afterEach(() => {
  vi.unstubAllGlobals();
  vi.resetModules();
});

describe("notifications", () => {
  it("asks once, shows the notice, and a click opens its workspace", async () => {
    const browser = fakeBrowser("default", "granted");
    const { showNotice } = await import("../state/notifications");
    const opened: string[] = [];
    await showNotice(notice, (id) => opened.push(id));
    await showNotice({ ...notice, id: "notice-2", body: null }, (id) => opened.push(id));
    expect(browser.prompts()).toBe(1);
    expect(browser.made.map((n) => [n.title, n.options.body])).toEqual([
      ["Tests pass", "fix-login: 41 green"],
      ["Tests pass", "fix-login"],
    ]);
    browser.made[0]?.onclick?.();
    expect(opened).toEqual(["ws-1"]);
    expect(browser.focus).toHaveBeenCalled();
  });

  it("never asks again after a dismissed prompt, and shows nothing without permission", async () => {
    const browser = fakeBrowser("default", "default");
    const { showNotice, ensurePermission } = await import("../state/notifications");
    await showNotice(notice, () => {});
    expect(await ensurePermission()).toBe(false);
    expect(browser.prompts()).toBe(1);
    expect(browser.made).toEqual([]);
  });
});
