"""L4: the turn loop. One AgentSession per workspace; every front-end consumes its events."""
