"""The terminal UI (`xum tui`, and `xum` alone on a terminal): a front-end like the server and
`xum run`, built with Textual. `xum.cli.tui` is its one entry; nothing else imports it, so
Textual is loaded only on that path."""
