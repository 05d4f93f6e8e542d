"""The Agent Client Protocol bridge (`xum acp`): editors drive xum sessions over stdio.

A front-end like `xum run` and the server: it opens sessions through the one assembly and turns
the engine's typed events into ACP `session/update` notifications. The ACP SDK is imported only
here, on the `xum acp` path. docs/acp.md is the user's guide; agent.py is where to start reading.
"""
