"""Checkouts: where a workspace's files live (the Checkout protocol, the factory that picks an
implementation for a record, and the local, worktree and SSH implementations)."""
