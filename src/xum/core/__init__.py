"""L0: identifiers, typed errors, paths, JSONC, clock, bounds. Imports nothing from xum."""
