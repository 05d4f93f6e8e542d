"""L2: where a workspace's commands and file operations run (local, worktree; ssh later)."""
