"""xum: run many AI coding agents in parallel, each in its own isolated workspace."""

__version__ = "0.1.0"
