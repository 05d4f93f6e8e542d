// The MCP settings API (docs/api.md): servers of ~/.xum/mcp.jsonc and of a project's
// .xum/mcp.jsonc, tool search, the Test button, and one workspace's overrides.

import { api, qs } from "./http";

export type McpScope = "global" | "repo";

export interface McpServerRow {
  name: string;
  scope: McpScope;
  transport: "stdio" | "http";
  command: string | null;
  url: string | null;
  /** Names only: environment and header values are write-only. */
  envNames: string[];
  headerNames: string[];
  timeoutSecs: number;
}

export interface McpFile {
  path: string;
  servers: McpServerRow[];
  problems: string[];
}

export interface RepoMcpFile extends McpFile {
  project: string;
  trusted: boolean;
}

export interface McpSettings {
  toolSearch: boolean;
  globalConfig: McpFile;
  repo: RepoMcpFile | null;
}

export interface McpServerBody {
  name: string;
  scope: McpScope;
  project?: string | null;
  command?: string | null;
  url?: string | null;
  /** A null value keeps the value already saved under that name. */
  env?: Record<string, string | null>;
  headers?: Record<string, string | null>;
  timeoutSecs?: number | null;
}

export interface McpTestResult {
  ok: boolean;
  error: string | null;
  tools: { name: string; description: string }[];
  prompts: string[];
}

export interface McpOverrideRow {
  name: string;
  scope: McpScope;
  enabled: boolean;
  allowedTools: string[] | null;
  status: string | null;
  error: string | null;
  tools: number | null;
}

export interface WorkspaceMcp {
  path: string;
  servers: McpOverrideRow[];
  withheld: string[];
  problems: string[];
}

export const getMcp = (project: string | null) =>
  api<McpSettings>("GET", `/api/settings/mcp${qs({ project })}`);
export const putMcpServer = (body: McpServerBody) => api<McpSettings>("PUT", "/api/settings/mcp/servers", body);
export const deleteMcpServer = (name: string, scope: McpScope, project: string | null) =>
  api<McpSettings>("DELETE", `/api/settings/mcp/servers${qs({ name, scope, project })}`);
export const setToolSearch = (enabled: boolean) =>
  api<McpSettings>("PUT", "/api/settings/mcp/tool-search", { enabled });
export const testMcpServer = (name: string, scope: McpScope, project: string | null) =>
  api<McpTestResult>("POST", "/api/settings/mcp/test", { name, scope, project });
export const getWorkspaceMcp = (id: string) => api<WorkspaceMcp>("GET", `/api/workspaces/${encodeURIComponent(id)}/mcp`);
export const putWorkspaceMcp = (
  id: string,
  servers: Record<string, { enabled?: boolean | null; allowedTools?: string[] | null }>,
) => api<WorkspaceMcp>("PUT", `/api/workspaces/${encodeURIComponent(id)}/mcp`, { servers });

/** "NAME=value" lines as a map; a line with only a NAME keeps the saved value (null). */
export function parseVariables(text: string): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const eq = line.indexOf("=");
    if (eq < 0) out[line] = null;
    else out[line.slice(0, eq).trim()] = line.slice(eq + 1);
  }
  return out;
}

/** A comma- or space-separated tool list; empty means every tool (null). */
export function parseToolList(text: string): string[] | null {
  const tools = text
    .split(/[\s,]+/)
    .map((t) => t.trim())
    .filter(Boolean);
  return tools.length ? tools : null;
}

export interface McpSignIn {
  /** Where the browser signs in; null when the stored tokens already work. */
  authorizationUrl: string | null;
  signedIn: boolean;
}

/** Start signing in to an HTTP server that requires OAuth (docs/mcp.md#oauth). */
export const startMcpSignIn = (name: string, scope: McpScope, project: string | null) =>
  api<McpSignIn>("POST", "/api/mcp/oauth/start", { name, scope, project });
export const signOutMcp = (name: string, scope: McpScope, project: string | null) =>
  api<McpSignIn>("POST", "/api/mcp/oauth/sign-out", { name, scope, project });
