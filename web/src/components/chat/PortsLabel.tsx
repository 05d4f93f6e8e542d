import type { Workspace } from "../../api/types";

/** The workspace's port block in the chat header ("ports 20000-20009"). On this machine (local
 *  and worktree workspaces) the first port, `XUM_PORT`, where a dev server is told to listen,
 *  opens in a new tab; an SSH workspace's ports are on its host, so they are only named. */
export function PortsLabel(props: { ws: Workspace }) {
  const ports = props.ws.ports;
  if (!ports) return null;
  const here = props.ws.runtime.type !== "ssh";
  const title = `This workspace's ports: XUM_PORT=${ports.first}, XUM_PORTS=${ports.first}-${ports.last}`;
  return (
    <span data-testid="ports" title={title}>
      {"ports "}
      {here ? (
        <a href={`http://localhost:${ports.first}`} target="_blank" rel="noreferrer">
          {ports.first}
        </a>
      ) : (
        ports.first
      )}
      {`-${ports.last}`}
    </span>
  );
}
