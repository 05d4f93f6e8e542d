// The address is the single source of truth for which workspace is on screen: `#/w/<id>`.
// Selecting a workspace writes the route; a changed route (a pasted link, Back, Forward, a
// script setting `location.hash`) selects what it names.

const WORKSPACE_ROUTE = /^#\/w\/([^/?#]+)\/?$/;

/** The workspace id a location hash names, or null (no route, another route, a bad escape). */
export function workspaceFromHash(hash: string): string | null {
  const m = WORKSPACE_ROUTE.exec(hash);
  if (!m?.[1]) return null;
  try {
    const id = decodeURIComponent(m[1]);
    return id === "" ? null : id;
  } catch {
    return null; // a malformed %-escape names nothing
  }
}

/** The hash that names a workspace ("" for none). */
export function hashForWorkspace(id: string | null): string {
  return id === null ? "" : `#/w/${encodeURIComponent(id)}`;
}
