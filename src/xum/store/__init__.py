"""L1 storage: the durable session event log and the projections derived from it, plus the
user's config, provider and secret files.

The session log (`sessionlog`, with `frames`, `manifest`, `scan`, `partial`) is the source of
truth for every workspace's conversation; `events` names its frame types and `projection` turns
frames into the provider history. `docs/sessions.md` describes the format and its guarantees.
Modules are imported directly (`from xum.store.sessionlog import SessionLog`) so that importing
one part of the store does not load the others.
"""
