// The Dev Container runtime in the new-workspace dialog: offered only when the project has a
// devcontainer.json (`GET /api/projects/devcontainers`, docs/api.md), with a choice of config
// when it has several.

/** One config as the server lists it: a named config's folder (null: the unnamed one). */
export interface DevcontainerConfig {
  name: string | null;
  path: string;
}

/** The configs the dialog offers: value "" is the unnamed config (the server's default). */
export function configChoices(configs: DevcontainerConfig[]): { value: string; label: string }[] {
  return configs.map((c) => ({ value: c.name ?? "", label: c.name ? `${c.name} (${c.path})` : c.path }));
}

/** The runtime of the create request for the chosen config ("" or unknown: the first listed),
 * with `shareCredentials` when the user asked for it. */
export function devcontainerRuntime(
  configs: DevcontainerConfig[],
  chosen: string,
  shareCredentials = false,
): { type: "devcontainer"; config?: string; shareCredentials?: boolean } {
  const picked = configs.find((c) => (c.name ?? "") === chosen) ?? configs[0];
  return {
    type: "devcontainer",
    ...(picked?.name ? { config: picked.name } : {}),
    ...(shareCredentials ? { shareCredentials: true } : {}),
  };
}
