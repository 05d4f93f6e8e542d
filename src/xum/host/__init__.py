"""The workspace host: one live session per workspace, the same for every front-end.

See docs/architecture.md ("The workspace host"). Layer: above `workspaces` and `engine`, below
the front-ends (`cli`, `tui`, `server`, `acp`), which turn their protocol into host calls and
host events into their output.
"""
