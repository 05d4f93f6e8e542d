"""Sub-agents: the manager that spawns and drives child sessions, the host the task tools talk
to, the records of children, their workspaces and the commits they bring back."""
