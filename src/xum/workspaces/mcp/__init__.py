"""MCP servers of a session: config files, overrides, the client connection, the manager that
starts and tracks servers, and the per-session view the assembly wires in."""
