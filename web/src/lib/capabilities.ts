// What this server offers, read from its OpenAPI document, so the UI shows no action the
// server lacks (a surface that is not implemented is absent, never a button that fails).

export interface Capabilities {
  fork: boolean;
  archive: boolean;
  delete: boolean;
  answers: boolean;
  rename: boolean;
  /** The workspace's selectable agents (`GET /api/workspaces/{id}/agents`). */
  agents: boolean;
  /** The GET route of the server's slash-command registry, if it has one. */
  slashPath: string | null;
  /** Start Here on a final reply or a plan (`POST .../start-here`). */
  startHere: boolean;
  /** The context usage (`GET .../context`) and the per-model threshold (`PUT .../auto-compaction`). */
  context: boolean;
  threshold: boolean;
  /** A workspace's MCP overrides (`GET`/`PUT /api/workspaces/{id}/mcp`). */
  mcp: boolean;
  /** A workspace's checkout paths for `@` mentions (`GET /api/workspaces/{id}/files`). */
  files: boolean;
  /** A folder's subdirectories for the Add project folder browser (`GET /api/fs/dirs`). */
  dirs: boolean;
  /** The plan card's Edit: read and write the plan file (`GET`/`PUT .../plan`). */
  plan: boolean;
}

export const NO_CAPABILITIES: Capabilities = {
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
};

export interface OpenApiDoc {
  paths?: Record<string, Record<string, unknown>>;
}

/** Routes as "METHOD /path/{}" (parameter names dropped), from an OpenAPI document. */
export function routesOf(doc: OpenApiDoc): Set<string> {
  const out = new Set<string>();
  for (const [path, methods] of Object.entries(doc.paths ?? {})) {
    for (const method of Object.keys(methods)) {
      out.add(`${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, "{}")}`);
    }
  }
  return out;
}

export function capabilitiesOf(routes: Set<string>): Capabilities {
  const ws = "/api/workspaces/{}";
  // A global registry, or one per workspace (skills come from the workspace's project).
  const gets = [...routes].filter((r) => r.startsWith("GET ") && /slash/i.test(r));
  const slash = gets.find((r) => !r.includes("{}")) ?? gets.find((r) => r.startsWith(`GET ${ws}/`));
  return {
    fork: routes.has(`POST ${ws}/fork`),
    archive: routes.has(`POST ${ws}/archive`) && routes.has(`POST ${ws}/unarchive`),
    delete: routes.has(`DELETE ${ws}`) && routes.has(`GET ${ws}/deletion`),
    answers: routes.has(`POST ${ws}/answers`),
    rename: routes.has(`POST ${ws}/rename`),
    agents: routes.has(`GET ${ws}/agents`),
    slashPath: slash ? slash.slice(4) : null,
    startHere: routes.has(`POST ${ws}/start-here`),
    context: routes.has(`GET ${ws}/context`),
    threshold: routes.has("PUT /api/settings/auto-compaction"),
    mcp: routes.has(`GET ${ws}/mcp`) && routes.has(`PUT ${ws}/mcp`),
    files: routes.has(`GET ${ws}/files`),
    dirs: routes.has("GET /api/fs/dirs"),
    plan: routes.has(`GET ${ws}/plan`) && routes.has(`PUT ${ws}/plan`),
  };
}

