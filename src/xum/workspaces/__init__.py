"""L5: projects and workspaces: creation, runtimes, lifecycle (hooks and trust come later)."""
