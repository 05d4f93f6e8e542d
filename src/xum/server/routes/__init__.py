"""REST routes under `/api/`, one module per area (docs/api.md)."""
