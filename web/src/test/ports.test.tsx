// The chat header's port label: a link to the first port on this machine, plain text over SSH.

import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { Workspace } from "../api/types";
import { PortsLabel } from "../components/chat/PortsLabel";

const ports = { first: 20010, last: 20019, count: 10 };

function ws(runtime: Workspace["runtime"], withPorts = true): Workspace {
  return { runtime, ports: withPorts ? ports : null } as Workspace;
}

describe("PortsLabel", () => {
  it("links the first port of a local workspace", () => {
    const out = renderToStaticMarkup(<PortsLabel ws={ws({ type: "worktree" })} />);
    expect(out).toContain('href="http://localhost:20010"');
    expect(out).toContain("-20019");
    expect(out).toContain("XUM_PORTS=20010-20019");
  });

  it("only names the ports of an SSH workspace (they are on its host)", () => {
    const out = renderToStaticMarkup(<PortsLabel ws={ws({ type: "ssh", host: "box" })} />);
    expect(out).not.toContain("href=");
    expect(out).toContain("ports 20010-20019");
  });

  it("shows nothing without a block", () => {
    expect(renderToStaticMarkup(<PortsLabel ws={ws({ type: "local" }, false)} />)).toBe("");
  });
});
