import { describe, expect, it } from "vitest";
import { capabilitiesOf, routesOf } from "../lib/capabilities";

describe("capabilities from the OpenAPI document", () => {
  it("offers only the workspace actions the server routes", () => {
    const none = capabilitiesOf(routesOf({ paths: { "/api/workspaces/{workspace_id}": { get: {}, patch: {} } } }));
    expect(none).toEqual({
      fork: false,
      archive: false,
      delete: false,
      answers: false,
      rename: false,
      agents: false,
      slashPath: null,
      startHere: false,
      context: false,
      threshold: false,
      mcp: false,
      files: false,
      dirs: false,
      plan: false,
    });
    const all = capabilitiesOf(
      routesOf({
        paths: {
          "/api/workspaces/{id}": { delete: {} },
          "/api/workspaces/{id}/deletion": { get: {} },
          "/api/workspaces/{id}/fork": { post: {} },
          "/api/workspaces/{id}/archive": { post: {} },
          "/api/workspaces/{id}/unarchive": { post: {} },
          "/api/workspaces/{id}/answers": { post: {} },
          "/api/workspaces/{id}/rename": { post: {} },
          "/api/workspaces/{id}/agents": { get: {} },
          "/api/workspaces/{id}/start-here": { post: {} },
          "/api/workspaces/{id}/context": { get: {} },
          "/api/settings/auto-compaction": { put: {} },
          "/api/workspaces/{id}/mcp": { get: {}, put: {} },
          "/api/workspaces/{id}/files": { get: {} },
          "/api/fs/dirs": { get: {} },
          "/api/workspaces/{id}/plan": { get: {}, put: {} },
        },
      }),
    );
    expect(all).toEqual({
      fork: true,
      archive: true,
      delete: true,
      answers: true,
      rename: true,
      agents: true,
      slashPath: null,
      startHere: true,
      context: true,
      threshold: true,
      mcp: true,
      files: true,
      dirs: true,
      plan: true,
    });
  });

  it("finds a global or per-workspace slash registry", () => {
    expect(capabilitiesOf(routesOf({ paths: { "/api/slash-commands": { get: {} } } })).slashPath).toBe(
      "/api/slash-commands",
    );
    expect(
      capabilitiesOf(routesOf({ paths: { "/api/workspaces/{workspace_id}/slash": { get: {} } } })).slashPath,
    ).toBe("/api/workspaces/{}/slash");
  });
});
